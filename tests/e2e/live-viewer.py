#!/usr/bin/env python3
# tests/e2e/live-viewer.py - a viewer of the LTTng live protocol 2.4 over a
# raw socket, for the tests that misbehave as a viewer (the relay's live
# side, lib/relay/live.c; the messages as lib/net/live-proto.h has them).
#
#   live-viewer.py HOST:PORT SESSION pipeline N LEN DONEFILE
#       attaches to SESSION (its name), sends N GET_PACKET requests for LEN
#       bytes at offset 0 of its first data stream in one go, prints
#       "sent N", then reads nothing until DONEFILE exists (at most 10
#       minutes); then reads what comes and prints "closed by the relay
#       after B bytes" when the relay closed the connection, or "open" when
#       nothing came for 2 s.
# Exits 0, or 1 with a message.
import os
import socket
import struct
import sys
import time

CONNECT, LIST_SESSIONS, ATTACH_SESSION, GET_PACKET = 1, 2, 3, 5
SESSION_LEN, STREAM_LEN = 339, 4371


def fail(msg):
    print("live-viewer: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


def recv_all(s, n):
    b = b""
    while len(b) < n:
        chunk = s.recv(n - len(b))
        if not chunk:
            fail("the relay closed the connection")
        b += chunk
    return b


def req(cmd, payload=b""):
    return struct.pack(">QII", len(payload), cmd, 0) + payload


def attach(s, name):
    s.sendall(req(CONNECT, struct.pack(">QIII", 2**64 - 1, 2, 4, 1)))
    recv_all(s, 20)
    s.sendall(req(LIST_SESSIONS))
    n = struct.unpack(">I", recv_all(s, 4))[0]
    sid = None
    for _ in range(n):
        e = recv_all(s, SESSION_LEN)
        if e[84:].split(b"\0")[0].decode() == name:
            sid = struct.unpack(">Q", e[:8])[0]
    if sid is None:
        fail("no session " + name)
    s.sendall(req(ATTACH_SESSION, struct.pack(">QQI", sid, 0, 1)))
    status, n = struct.unpack(">II", recv_all(s, 8))
    if status != 1:
        fail("ATTACH: status %d" % status)
    data = []
    for _ in range(n):
        e = recv_all(s, STREAM_LEN)
        sid, _, meta = struct.unpack(">QQI", e[:20])
        if not meta:
            data.append(sid)
    if not data:
        fail("no data stream")
    return data


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    streams = attach(s, sys.argv[2])
    if sys.argv[3] != "pipeline":
        fail("unknown mode " + sys.argv[3])
    n, ln, done = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    one = req(GET_PACKET, struct.pack(">QQI", streams[0], 0, ln))
    s.sendall(one * n)
    print("sent %d" % n, flush=True)
    for _ in range(6000):
        if os.path.exists(done):
            break
        time.sleep(0.1)
    got = 0
    s.settimeout(2)
    try:
        while True:
            b = s.recv(1 << 20)
            if not b:
                print("closed by the relay after %d bytes" % got, flush=True)
                return
            got += len(b)
    except ConnectionResetError:
        print("closed by the relay after %d bytes" % got, flush=True)
    except socket.timeout:
        print("open", flush=True)


main()
