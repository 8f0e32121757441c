# SPDX-License-Identifier: MIT
"""tests/e2e/relaywire.py - the relay protocol's framing for the test peers
(hostile-peer.py, auth-peer.py): a message is a type and a length (two
little-endian u32) then the payload (docs/relay.md)."""
import struct

HELLO = 1


def addr(s):
    """'HOST:PORT' (HOST may be [v6]) as (host, port)."""
    h, p = s.rsplit(':', 1)
    return h.strip('[]'), int(p)


def msg(t, payload=b''):
    return struct.pack('<II', t, len(payload)) + payload


def hello(session, host, trace, flags=0):
    """A producer's HELLO (version 1, FLAGS, no resume id) for S/H/T."""
    return msg(HELLO, struct.pack('<IIQ', 1, flags, 0) + bytes(16) +
               b''.join(x.encode() + b'\0' for x in (session, host, trace)))


def full(s, n):
    """N bytes from socket S, or None once it is closed (or fails)."""
    b = b''
    while len(b) < n:
        try:
            c = s.recv(n - len(b))
        except OSError:
            return None
        if not c:
            return None
        b += c
    return b


def recv_msg(s):
    """(type, payload), or None once closed."""
    h = full(s, 8)
    if h is None:
        return None
    t, n = struct.unpack('<II', h)
    p = full(s, n)
    return None if p is None else (t, p)
