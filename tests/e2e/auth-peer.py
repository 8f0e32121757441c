#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/e2e/auth-peer.py - peers of a relay that authenticates
(t0870-relay-auth.sh), speaking the handshake byte by byte (docs/auth.md), so
that the test can claim what a well-behaved client never would.

  producer ADDR KEY S H T [KIND]  HELLO for S/H/T with the credential in file
                           KEY ("-": none, no AUTH flag), claiming KIND
                           (cluster, node, viewer; default the file's); prints
                           "welcome STATUS MESSAGE", and when welcomed sends
                           a line of metadata and CLOSE: "ack STATUS"
  replay ADDR KEY S H T    a producer welcomed with KEY, then a second
                           connection sending the same HELLO and the first
                           one's AUTH again: prints both welcomes
  silent ADDR              HELLO with the AUTH flag, then no answer to the
                           challenge: "closed after S s", or "open after 60 s"
  flood ADDR N             N connections one after the other, each a HELLO
                           and an AUTH of a random MAC: prints "refused R of
                           N" (R: those answered with a refusal)
  join ADDR KEY HOST [KIND]  an agent's JOIN as HOST (docs/cluster.md) with
                           the credential in KEY ("-": none, no AUTH flag),
                           claiming KIND: prints "welcome STATUS MESSAGE"
  joinhello ADDR KEY HOST  a JOIN answered with the MAC of a producer's
                           proof (role and context of a HELLO): the same
  viewer ADDR KEY [KIND]   on a live port: TRAWL_CHALLENGE, TRAWL_AUTH with
                           KEY ("-": no proof), then CONNECT; prints "auth
                           STATUS REASON" and "connected" or "closed"
Where a proof is taken, the relay's own (docs/auth.md: PROOF before the
WELCOME, the MAC at the end of the TRAWL_AUTH reply) is checked too: a wrong
one prints "the relay's proof is wrong" in place of the status.
ADDR is HOST:PORT. The MACs are computed here (hmac, hashlib), not by trawl.
"""
import hashlib
import hmac
import os
import socket
import struct
import sys
import time

from relaywire import addr, msg, hello, full, recv_msg

HELLO, WELCOME, METADATA, CLOSE, ACK, CHALLENGE, AUTH, PROOF = 1, 2, 3, 7, 8, 9, 10, 13
JOIN = 32
KINDS = {'cluster': 1, 'node': 2, 'viewer': 3}
ROLE_PRODUCER, ROLE_VIEWER, ROLE_NODE = 1, 2, 3
LIVE_CHALLENGE, LIVE_AUTH, LIVE_CONNECT = 0x74720001, 0x74720002, 1


def load(path):
    """(kind number, key bytes), or None for '-'."""
    if path == '-':
        return None
    for line in open(path):
        w = line.split('#')[0].split()
        if w:
            return KINDS[w[0]], bytes.fromhex(w[-1])
    raise SystemExit('no credential in ' + path)


def mac(key, role, kind, nr, np, ctx=b'', label=b'trawl-auth-1\0'):
    head = label + struct.pack('<II', role, kind) + nr + np
    return hmac.new(key, head + ctx, hashlib.sha256).digest()


def relay_mac(key, role, kind, nr, np, ctx=b''):
    """The relay's proof to its peer: the same under its own label."""
    return mac(key, role, kind, nr, np, ctx, b'trawl-rely-1\0')


def status_of(m):
    if m is None:
        return 'closed'
    t, p = m
    if t == -1:
        return 'the relay\'s proof is wrong'
    if t != WELCOME:
        return 'type %d' % t
    st = struct.unpack('<i', p[:4])[0]
    return '%d %s' % (st, p[4:].split(b'\0')[0].decode())


def connect(a):
    s = socket.create_connection(addr(a), timeout=20)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def join_msg(host, flags):
    return msg(JOIN, struct.pack('<IIQ', 1, flags, 0) + host.encode() + b'\0')


def handshake(s, cred, h, kind=None, role=ROLE_PRODUCER, ctx=None):
    """Sends HELLO (or JOIN) h; answers a CHALLENGE with cred (claiming kind),
    the MAC of role over ctx (default h). Returns (the WELCOME or None, the
    AUTH sent or None)."""
    s.sendall(h)
    m = recv_msg(s)
    if m is None or m[0] != CHALLENGE or cred is None:
        return m, None
    nr = m[1][4:36]
    k = cred[0] if kind is None else kind
    np = os.urandom(32)
    a = msg(AUTH, struct.pack('<I', k) + np +
            mac(cred[1], role, k, nr, np, h if ctx is None else ctx))
    s.sendall(a)
    m = recv_msg(s)
    # a proof taken: the relay proves the same key over our nonce (the
    # key of the kind claimed, as the relay computed it; checked when it
    # is the file's own kind)
    if m and m[0] == PROOF:
        if k == cred[0] and m[1] != relay_mac(cred[1], role, k, nr, np,
                                             h if ctx is None else ctx):
            return (-1, b''), a
        m = recv_msg(s)
    return m, a


def producer(a, key, se, ho, tr, kind=None):
    cred = load(key)
    s = connect(a)
    w, _ = handshake(s, cred, hello(se, ho, tr, 1 if cred else 0),
                     KINDS[kind] if kind else None)
    print('welcome', status_of(w), flush=True)
    if w and w[0] == WELCOME and struct.unpack('<i', w[1][:4])[0] == 0:
        # some metadata, so that the trace stays at the relay
        s.sendall(msg(METADATA, b'/* CTF 1.8 */\n') + msg(CLOSE))
        m = recv_msg(s)
        print('ack', struct.unpack('<i', m[1][:4])[0] if m else 'closed', flush=True)
    s.close()


def join(a, key, host, kind=None):
    cred = load(key)
    s = connect(a)
    w, _ = handshake(s, cred, join_msg(host, 1 if cred else 0),
                     KINDS[kind] if kind else None, ROLE_NODE)
    print('welcome', status_of(w), flush=True)
    s.close()


def joinhello(a, key, host):
    cred = load(key)
    s = connect(a)
    w, _ = handshake(s, cred, join_msg(host, 1), None, ROLE_PRODUCER,
                     hello('s', host, 'ust', 1))
    print('welcome', status_of(w), flush=True)
    s.close()


def replay(a, key, se, ho, tr):
    cred = load(key)
    h = hello(se, ho, tr, 1)
    s = connect(a)
    w, auth = handshake(s, cred, h)
    print('first', status_of(w), flush=True)
    s.close()
    s = connect(a)
    s.sendall(h)
    m = recv_msg(s)
    if m and m[0] == CHALLENGE and auth:
        s.sendall(auth)	# the first connection's answer, to a new challenge
        m = recv_msg(s)
    print('replayed', status_of(m), flush=True)
    s.close()


def silent(a):
    s = connect(a)
    s.settimeout(60)
    t0 = time.monotonic()
    s.sendall(hello('sil', 'h', 'ust', 1))
    m = recv_msg(s)
    if m is None or m[0] != CHALLENGE:
        print('no challenge', flush=True)
        return
    try:
        got = s.recv(1)
    except socket.timeout:
        print('open after 60 s', flush=True)
        return
    except OSError:
        got = b''
    print('closed after %.1f s' % (time.monotonic() - t0) if not got else 'data', flush=True)


def flood(a, n):
    refused = 0
    for i in range(n):
        s = connect(a)
        h = hello('flood', 'h%d' % (i % 50), 'ust', 1)
        s.sendall(h)
        m = recv_msg(s)
        if m and m[0] == CHALLENGE:
            s.sendall(msg(AUTH, struct.pack('<I', 1) + os.urandom(64)))
            m = recv_msg(s)
            if m and m[0] == WELCOME and struct.unpack('<i', m[1][:4])[0] < 0:
                refused += 1
        s.close()
    print('refused %d of %d' % (refused, n), flush=True)


def live_req(cmd, payload=b''):
    return struct.pack('>QII', len(payload), cmd, 0) + payload


def viewer(a, key, kind=None):
    cred = load(key)
    s = connect(a)
    if cred is not None:
        s.sendall(live_req(LIVE_CHALLENGE))
        r = full(s, 40)
        if r is None:
            print('auth closed', flush=True)
            return
        st = struct.unpack('>I', r[:4])[0]
        if st == 1:
            k = KINDS[kind] if kind else cred[0]
            np, nr = os.urandom(32), r[8:40]
            s.sendall(live_req(LIVE_AUTH, struct.pack('>I', k) + np +
                               mac(cred[1], ROLE_VIEWER, k, nr, np)))
            r = full(s, 4 + 256 + 32)
            if r is None:
                print('auth closed', flush=True)
                return
            st = struct.unpack('>I', r[:4])[0]
            why = r[4:260].split(b'\0')[0].decode()
            if st == 1 and r[260:] != relay_mac(cred[1], ROLE_VIEWER, k, nr, np):
                why = "the relay's proof is wrong"
            print('auth', st, why, flush=True)
        else:
            print('auth none', flush=True)
    s.sendall(live_req(LIVE_CONNECT, struct.pack('>QIII', 0, 2, 4, 1)))
    print('connected' if full(s, 20) is not None else 'closed', flush=True)
    s.close()


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ''
    if cmd == 'producer' and len(argv) in (7, 8):
        producer(*argv[2:])
    elif cmd == 'replay' and len(argv) == 7:
        replay(*argv[2:])
    elif cmd == 'silent' and len(argv) == 3:
        silent(argv[2])
    elif cmd == 'flood' and len(argv) == 4:
        flood(argv[2], int(argv[3]))
    elif cmd == 'join' and len(argv) in (5, 6):
        join(*argv[2:])
    elif cmd == 'joinhello' and len(argv) == 5:
        joinhello(*argv[2:])
    elif cmd == 'viewer' and len(argv) in (4, 5):
        viewer(*argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
