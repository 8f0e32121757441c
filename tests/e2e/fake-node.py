#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/e2e/fake-node.py - a node that joins a relay (no secret) and puts
terminal escapes in everything it sends (t0875-auth-impostor.sh, issue 28
item 5): its sessions in each PONG, its output and errors in each
CTL_REPLY. `trawl cluster` must print them escaped.

  fake-node.py ADDR HOST

Prints "joined" once welcomed; answers until the relay closes, or 60 s.
"""
import socket
import struct
import sys
import time

from relaywire import addr, msg, recv_msg

JOIN, WELCOME, PING, PONG, CTL, CTL_REPLY = 32, 2, 33, 34, 35, 36
# clear the screen, home, green "all nodes ok", a title, a bell, 8-bit CSI
EVIL = '\x1b[2J\x1b[H\x1b[32mall nodes ok\x1b[0m\x1b]0;pwned\x07\r\x9b1m'


def s0(t):
    return t.encode('utf-8', 'surrogateescape') + b'\0'


def main(argv):
    if len(argv) != 3:
        raise SystemExit(__doc__)
    s = socket.create_connection(addr(argv[1]), timeout=10)
    s.sendall(msg(JOIN, struct.pack('<IIQ', 1, 0, time.monotonic_ns()) + s0(argv[2])))
    m = recv_msg(s)
    if not m or m[0] != WELCOME or struct.unpack('<i', m[1][:4])[0] != 0:
        raise SystemExit('not welcomed: %r' % (m,))
    print('joined', flush=True)
    end = time.monotonic() + 60
    s.settimeout(1)
    while time.monotonic() < end:
        try:
            m = recv_msg(s)
        except socket.timeout:
            continue
        if m is None:
            return
        t, p = m
        if t == PING:
            t_relay = struct.unpack('<Q', p[:8])[0]
            s.sendall(msg(PONG, struct.pack('<QQQQ', t_relay, time.monotonic_ns(), 0, 0) +
                          s0('s' + EVIL + ':active')))
        elif t == CTL:
            rid = struct.unpack('<I', p[:4])[0]
            now = time.monotonic_ns()
            s.sendall(msg(CTL_REPLY, struct.pack('<IiQQ', rid, 0, now, now) +
                          s0('done' + EVIL + '\nline two\x1b[1A') + s0('')))


if __name__ == '__main__':
    main(sys.argv)
