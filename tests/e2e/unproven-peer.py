#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/e2e/unproven-peer.py - peers that never prove anything, attacking
`trawl relay` from a source address of their own on loopback (t0857).

  hold MODE ADDR SRC N END  keeps N connections from SRC (127.0.0.X) to ADDR
                           open, each reconnected when the relay closes it (at
                           most 200 connections a second), until the file END
                           exists (at most 120 s). MODE: idle (sends nothing),
                           loris (a HELLO one byte every 0.5 s), silent (a
                           HELLO with the AUTH flag, no answer to the
                           challenge), challenge (a viewer sending
                           TRAWL_CHALLENGE every 0.5 s). Prints "holding K" once
                           K connections are open at once (K = N, or after
                           10 s what it has), then at the end "connections C
                           longest S" (C: made in all; S: seconds the longest
                           lived; one still open at the end counts until then)
  declare ADDR SRC N END   N producers: HELLO, then a PACKET header declaring
                           64 MiB and 1 KiB of it; prints "declared K" (K:
                           welcomed), holds until END exists
  streams ADDR SRC N K END N producers: HELLO, then K STREAMs each; prints
                           "streams W" (W: welcomed producers), holds until END
ADDR is HOST:PORT. Exits 0 unless the arguments are wrong.
"""
import os
import resource
import selectors
import socket
import struct
import sys
import time

from relaywire import addr, msg, hello, recv_msg

PACKET, STREAM = 5, 4
HELLO_AUTH = 1
LIVE_CHALLENGE = 0x74720001


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connect(a, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(addr(a))
    return s


def hold(mode, a, src, n, end):
    raise_nofile()
    sel = selectors.DefaultSelector()
    born = {}
    longest = 0.0
    made = 0
    told = False
    t0 = time.monotonic()
    stop = t0 + 120
    last_tick = 0.0
    budget, budget_t = 200, t0
    loris = hello('loris', 'h', 'ust')
    pos = {}
    while time.monotonic() < stop and not os.path.exists(end):
        now = time.monotonic()
        if now - budget_t >= 1.0:
            budget, budget_t = 200, now
        while len(born) < n and budget > 0:
            budget -= 1
            try:
                s = connect(a, src)
            except OSError:
                break
            s.setblocking(False)
            made += 1
            born[s] = time.monotonic()
            pos[s] = 0
            if mode == 'silent':
                try:
                    s.send(hello('silent', 'h', 'ust', HELLO_AUTH))
                except OSError:
                    pass
            sel.register(s, selectors.EVENT_READ)
        if not told and (len(born) >= n or now - t0 > 10):
            print('holding %d' % len(born), flush=True)
            told = True
        for key, _ in sel.select(0.1):
            s = key.fileobj
            try:
                gone = not s.recv(65536)
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                longest = max(longest, time.monotonic() - born.pop(s))
                pos.pop(s, None)
                sel.unregister(s)
                s.close()
        now = time.monotonic()
        if now - last_tick >= 0.5 and mode in ('loris', 'challenge'):
            last_tick = now
            for s in list(born):
                try:
                    if mode == 'loris' and pos[s] < len(loris):
                        s.send(loris[pos[s]:pos[s] + 1])
                        pos[s] += 1
                    elif mode == 'challenge':
                        s.send(struct.pack('>QII', 0, LIVE_CHALLENGE, 0))
                except OSError:
                    pass
    now = time.monotonic()
    for s, b in born.items():
        longest = max(longest, now - b)
        s.close()
    if not told:
        print('holding %d' % len(born), flush=True)
    print('connections %d longest %.1f' % (made, longest), flush=True)


def wait_end(end):
    stop = time.monotonic() + 120
    while not os.path.exists(end) and time.monotonic() < stop:
        time.sleep(0.05)


def producers(a, src, n, tag):
    socks = []
    for i in range(n):
        try:
            s = connect(a, src)
            s.sendall(hello('%s%d' % (tag, i), 'h', 'ust'))
            r = recv_msg(s)
        except OSError:
            continue
        if r and struct.unpack('<i', r[1][:4])[0] == 0:
            socks.append(s)
        else:
            s.close()
    return socks


def declare(a, src, n, end):
    raise_nofile()
    socks = producers(a, src, n, 'decl')
    for s in socks:
        try:
            s.sendall(struct.pack('<II', PACKET, 64 << 20) + bytes(1024))
        except OSError:
            pass
    print('declared %d' % len(socks), flush=True)
    wait_end(end)


def streams(a, src, n, k, end):
    raise_nofile()
    socks = producers(a, src, n, 'str')
    for s in socks:
        try:
            for i in range(k):
                s.sendall(msg(STREAM, struct.pack('<IIQ', i, i % 256, 0) + b'stream_%d\0' % i))
        except OSError:
            pass
    print('streams %d' % len(socks), flush=True)
    wait_end(end)


def main(av):
    cmd = av[1] if len(av) > 1 else ''
    if cmd == 'hold' and len(av) == 7 and av[2] in ('idle', 'loris', 'silent', 'challenge'):
        hold(av[2], av[3], av[4], int(av[5]), av[6])
    elif cmd == 'declare' and len(av) == 6:
        declare(av[2], av[3], int(av[4]), av[5])
    elif cmd == 'streams' and len(av) == 7:
        streams(av[2], av[3], int(av[4]), int(av[5]), av[6])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
