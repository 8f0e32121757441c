#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/e2e/cut-relay.py - a fake relay whose reasons carry terminal
escapes and a backslash, for the producers' printing of a relay's words
(t0862-relay-reason-escaped.sh): each is escaped once, where printed.

  cut-relay.py MODE READY LOG

MODE:
  ack     WELCOME 0 to a HELLO (and RESUMED 0 when it asks to resume), then
          at its first message an ACK cutting the trace off (-ENOSPC) with
          the reason, after which it drops what comes until the producer
          closes
  resume  WELCOME 0 (and RESUMED 0) to the first HELLO, then closes at its
          first message; every later HELLO is refused with a WELCOME
          (-EACCES) and the reason
It listens on 127.0.0.1 (the data port, written to the file READY) and logs
one line per event to LOG: "data N", "got TYPE", "cut N", "refused N",
"closed N". Runs until killed; every wait is bounded by socket timeouts.
"""
import socket
import struct
import sys

from relaywire import msg, recv_msg

REASON = b'disk \x1b[2J full \\ here\x07'
WELCOME, ACK, RESUMED = 2, 8, 11
HELLO_RESUME, HELLO_COUNT = 2, 4


def status(t, st, text, count=None):
    p = struct.pack('<i', st) + text + b'\0'
    if count is not None:
        p += struct.pack('<Q', count)
    return msg(t, p)


def serve(c, n, mode, log):
    c.settimeout(10)
    m = recv_msg(c)
    if m is None:
        log('closed', n)
        return
    log('got', m[0])
    flags = struct.unpack('<I', m[1][4:8])[0] if len(m[1]) >= 8 else 0
    if mode == 'resume' and n > 1:
        c.sendall(status(WELCOME, -13, REASON))
        log('refused', n)
        return
    c.sendall(status(WELCOME, 0, b''))
    if flags & HELLO_RESUME:
        c.sendall(msg(RESUMED, struct.pack('<Q', 0)))
    m = recv_msg(c)
    if m is None:
        log('closed', n)
        return
    log('got', m[0])
    if mode == 'resume':
        log('closed', n)
        return
    c.sendall(status(ACK, -28, REASON, 0 if flags & HELLO_COUNT else None))
    log('cut', n)
    c.shutdown(socket.SHUT_WR)
    while True:
        try:
            b = c.recv(1 << 16)
        except OSError:
            break
        if not b:
            break
    log('closed', n)


def main(argv):
    if len(argv) != 4 or argv[1] not in ('ack', 'resume'):
        raise SystemExit(__doc__)
    mode, ready, logp = argv[1:]
    logf = open(logp, 'a', buffering=1)

    def log(*w):
        logf.write(' '.join(str(x) for x in w) + '\n')
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', 0))
    s.listen(16)
    with open(ready + '.tmp', 'w') as f:
        f.write('127.0.0.1:%d\n' % s.getsockname()[1])
    import os
    os.rename(ready + '.tmp', ready)
    n = 0
    while True:
        c, _ = s.accept()
        n += 1
        log('data', n)
        try:
            serve(c, n, mode, log)
        except OSError as e:
            log('closed', n, e.strerror)
        c.close()


if __name__ == '__main__':
    main(sys.argv)
