#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/e2e/hostile-peer.py - peers that misbehave towards `trawl relay`
(t0850-relay-hostile.sh): raw sockets, so that the test controls every byte.

  idle N ADDR END          N connections that send nothing; prints
                           "connected N" once all connected, closes them all
                           once the file END exists (at most 10 minutes)
  declare N ADDR HELLO     N connections that each declare a PACKET of 64 MiB
                           (after a HELLO when HELLO is 1) and send its bytes
                           as fast as the relay takes them; prints the MiB each
                           got through before the relay closed it
  slow ADDR SECS           sends a HELLO one byte a second; prints
                           "closed after S s" when the relay closes it, or
                           "open after SECS s"
  viewer ADDR              a live viewer's CONNECT: prints "served" when the
                           relay answers, else "closed"
  quiet-viewer ADDR SECS   CONNECT, then silence: "connected" once answered,
                           then "closed after S s" or
                           "open after SECS s"
  produce ADDR S H T N [END]  HELLO for S/H/T, N streams, then (once END
                           exists, if given) CLOSE; prints "welcome STATUS
                           MESSAGE", and "ack STATUS" after the CLOSE
ADDR is HOST:PORT. Exits 0 unless the arguments are wrong.
"""
import os
import select
import socket
import struct
import sys
import time

from relaywire import addr, msg, hello, recv_msg

HELLO, WELCOME, METADATA, STREAM, PACKET, BEACON, CLOSE, ACK = range(1, 9)


def status_of(p):
    st = struct.unpack('<i', p[:4])[0]
    return st, p[4:].split(b'\0')[0].decode(errors='replace')


def wait_file(path, secs):
    end = time.monotonic() + secs
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.05)


def idle(n, a, end):
    socks = []
    for _ in range(n):
        try:
            socks.append(socket.create_connection(addr(a), timeout=10))
        except OSError as e:
            print('connect failed: %s' % e, flush=True)
            break
    print('connected %d' % len(socks), flush=True)
    wait_file(end, 600)
    for s in socks:
        s.close()


def declare(n, a, with_hello):
    size = 64 << 20
    socks, left, got = [], [], []
    zeros = memoryview(bytes(1 << 18))
    for i in range(n):
        s = socket.create_connection(addr(a), timeout=10)
        if with_hello:
            s.sendall(hello('mem', 'h%d' % i, 'ust'))
            r = recv_msg(s)
            if not r or status_of(r[1])[0] != 0:
                print('refused at HELLO', flush=True)
                s.close()
                continue
        s.sendall(struct.pack('<II', PACKET, size))
        s.setblocking(False)
        socks.append(s)
        left.append(size)
        got.append(0)
    live = set(range(len(socks)))
    end = time.monotonic() + 120
    while live and time.monotonic() < end:
        _, w, _ = select.select([], [socks[i] for i in live], [], 1.0)
        for s in w:
            i = socks.index(s)
            try:
                k = s.send(zeros[:min(len(zeros), left[i])])
            except BlockingIOError:
                continue
            except OSError:
                live.discard(i)
                continue
            left[i] -= k
            got[i] += k
            if not left[i]:
                live.discard(i)
    # the relay buffers what it took: keep the sockets until it is measured
    print(' '.join('%d' % (g >> 20) for g in got), flush=True)
    for s in socks:
        s.close()


def closed_within(s, secs):
    t0 = time.monotonic()
    s.settimeout(0.2)
    while time.monotonic() - t0 < secs:
        try:
            if not s.recv(4096):
                return time.monotonic() - t0
        except socket.timeout:
            continue
        except OSError:
            return time.monotonic() - t0
    return None


def slow(a, secs):
    s = socket.create_connection(addr(a), timeout=10)
    t0 = time.monotonic()
    closed = False
    for b in hello('slow', 'h', 'ust'):
        if time.monotonic() - t0 > secs:
            break
        try:
            s.send(bytes([b]))
        except OSError:
            closed = True
            break
        if closed_within(s, 1.0) is not None:
            closed = True
            break
    t = time.monotonic() - t0
    print('closed after %.1f s' % t if closed else 'open after %d s' % secs, flush=True)


def viewer_connect(a):
    s = socket.create_connection(addr(a), timeout=10)
    s.sendall(struct.pack('>QII', 20, 1, 0) + struct.pack('>QIII', 2**64 - 1, 2, 4, 1))
    s.settimeout(10)
    try:
        r = s.recv(20)
    except OSError:
        r = b''
    # trawl's refusal of a viewer as it connects (lib/net/live-proto.h):
    # "trRF", then major 0 where a CONNECT reply has its protocol's
    if len(r) >= 12 and r[:4] == b'trRF' and r[8:12] == bytes(4):
        return s, False
    return s, len(r) > 0


def viewer(a):
    s, ok = viewer_connect(a)
    print('served' if ok else 'closed', flush=True)
    s.close()


def quiet_viewer(a, secs):
    s, ok = viewer_connect(a)
    if not ok:
        print('refused', flush=True)
        return
    print('connected', flush=True)	# its slot held: the signal a test waits for
    r = closed_within(s, secs)
    print('closed after %.1f s' % r if r is not None else 'open after %d s' % secs, flush=True)


def produce(a, session, host, trace, n, end=None):
    s = socket.create_connection(addr(a), timeout=10)
    s.settimeout(30)
    try:
        s.sendall(hello(session, host, trace))
    except OSError:
        pass
    r = recv_msg(s)
    if r is None:
        print('closed', flush=True)
        return
    st, m = status_of(r[1])
    print('welcome %d %s' % (st, m), flush=True)
    if st:
        return
    for i in range(n):
        s.sendall(msg(STREAM, struct.pack('<IIQ', i, i % 256, 0) + b'stream_%d\0' % i))
    if end:
        wait_file(end, 600)
    s.sendall(msg(CLOSE))
    r = recv_msg(s)
    print('ack %s' % (status_of(r[1])[0] if r else 'none'), flush=True)


def main(av):
    cmd = av[1] if len(av) > 1 else ''
    if cmd == 'idle' and len(av) == 5:
        idle(int(av[2]), av[3], av[4])
    elif cmd == 'declare' and len(av) == 5:
        declare(int(av[2]), av[3], av[4] == '1')
    elif cmd == 'slow' and len(av) == 4:
        slow(av[2], int(av[3]))
    elif cmd == 'viewer' and len(av) == 3:
        viewer(av[2])
    elif cmd == 'quiet-viewer' and len(av) == 4:
        quiet_viewer(av[2], int(av[3]))
    elif cmd == 'produce' and len(av) in (7, 8):
        produce(av[2], av[3], av[4], av[5], int(av[6]), av[7] if len(av) == 8 else None)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
