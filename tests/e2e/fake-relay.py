#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/e2e/fake-relay.py - an impostor at a relay's address, for the
mutual authentication (t0875-auth-impostor.sh, docs/auth.md): it does not
hold the secret its peers hold, and tries to be obeyed all the same.

  fake-relay.py MODE READY LOG OUTDIR

MODE says how it answers a peer that offers a proof (the data port: a
producer's HELLO, an agent's JOIN; the live port: TRAWL_CHALLENGE):
  nochallenge   asks no proof: WELCOME 0 at once (a live NONE)
  noproof       a CHALLENGE, takes the AUTH, then WELCOME 0 without a PROOF
                (live: the reply OK with its proof zero)
  wrongproof    a CHALLENGE, then a PROOF of random bytes and WELCOME 0
                (live: a random proof)
  refuse        a WELCOME refusing, whose reason is terminal escapes
After a WELCOME to a JOIN it asks what an attacker would: create a session
writing to OUTDIR/evil, enable, start, stop it (requests 1-4); create one
streaming to its third port (the "evil" port), enable, start it (5-7). It listens on 127.0.0.1 (data, live, evil: three
ports, written on one line to the file READY) and logs one line per event
to LOG: "data N" (a connection), "got TYPE", "ctl-reply ID STATUS", "closed
N", "evil N" (a connection to the evil port), "live got CMD". Runs until
killed; every wait is bounded by socket timeouts.
"""
import os
import select
import socket
import struct
import sys

from relaywire import msg, full, recv_msg

NAMES = {1: 'HELLO', 2: 'WELCOME', 3: 'METADATA', 4: 'STREAM', 5: 'PACKET',
         6: 'BEACON', 7: 'CLOSE', 8: 'ACK', 9: 'CHALLENGE', 10: 'AUTH', 13: 'PROOF',
         32: 'JOIN', 33: 'PING', 34: 'PONG', 35: 'CTL', 36: 'CTL_REPLY'}
WELCOME, CHALLENGE, AUTH, PROOF, JOIN, CTL = 2, 9, 10, 13, 32, 35
LIVE_CHALLENGE, LIVE_AUTH = 0x74720001, 0x74720002


def listener():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', 0))
    s.listen(16)
    return s


class Log:
    def __init__(self, path):
        self.f = open(path, 'a', buffering=1)

    def __call__(self, *words):
        self.f.write(' '.join(str(w) for w in words) + '\n')


def welcome(status=0, text=b''):
    return msg(WELCOME, struct.pack('<i', status) + text + b'\0')


def ctl(i, *args):
    return msg(CTL, struct.pack('<II', i, len(args)) +
               b''.join(a.encode() + b'\0' for a in args))


def data(c, n, mode, log, outdir, evil):
    c.settimeout(5)
    m = recv_msg(c)
    if m is None:
        log('closed', n)
        return
    log('got', NAMES.get(m[0], m[0]))
    if mode == 'refuse':
        c.sendall(welcome(-13, b'\x1b[2J\x1b[Hgo away\x07'))
        log('refused', n)
        return
    if mode != 'nochallenge':
        c.sendall(msg(CHALLENGE, struct.pack('<I', 1) + os.urandom(32)))
        a = recv_msg(c)
        if a is None:
            log('closed', n)
            return
        log('got', NAMES.get(a[0], a[0]))
        if mode == 'wrongproof':
            c.sendall(msg(PROOF, os.urandom(32)))
    c.sendall(welcome())
    if m[0] == JOIN:
        reqs = [ctl(1, 'create', 'evil', 'output=' + os.path.join(outdir, 'evil')),
                ctl(2, 'enable', 'evil', '*'), ctl(3, 'start', 'evil'), ctl(4, 'stop', 'evil'),
                ctl(5, 'create', 'evil2', 'relay=' + evil),
                ctl(6, 'enable', 'evil2', '*'), ctl(7, 'start', 'evil2')]
        try:
            for r in reqs:
                c.sendall(r)
        except OSError:
            pass
    # what the peer does next, until it closes (or 5 s pass)
    while True:
        try:
            r = recv_msg(c)
        except OSError:
            r = None
        if r is None:
            log('closed', n)
            return
        if r[0] == 36:
            log('ctl-reply', struct.unpack('<I', r[1][:4])[0],
                struct.unpack('<i', r[1][4:8])[0])
        else:
            log('got', NAMES.get(r[0], r[0]))


def live(c, n, mode, log):
    c.settimeout(5)
    h = full(c, 16)
    if h is None:
        log('closed', n)
        return
    ln, cmd, _ = struct.unpack('>QII', h)
    log('live got', hex(cmd))
    if cmd != LIVE_CHALLENGE:
        return
    if mode == 'nochallenge':
        c.sendall(struct.pack('>II', 2, 0) + bytes(32))	# LIVE_AUTH_NONE
    else:
        c.sendall(struct.pack('>II', 1, 1) + os.urandom(32))
        h = full(c, 16)
        if h is None:
            log('closed', n)
            return
        ln, cmd, _ = struct.unpack('>QII', h)
        full(c, ln)
        log('live got', hex(cmd))
        proof = bytes(32) if mode == 'noproof' else os.urandom(32)
        c.sendall(struct.pack('>I', 1) + bytes(256) + proof)
    # whatever comes next (a CONNECT from a peer that obeys)
    while True:
        h = full(c, 16)
        if h is None:
            log('closed', n)
            return
        ln, cmd, _ = struct.unpack('>QII', h)
        full(c, ln)
        log('live got', hex(cmd))


def main(argv):
    if len(argv) != 5 or argv[1] not in ('nochallenge', 'noproof', 'wrongproof', 'refuse'):
        raise SystemExit(__doc__)
    mode, ready, logp, outdir = argv[1:]
    log = Log(logp)
    d, lv, ev = listener(), listener(), listener()
    evil = '127.0.0.1:%d' % ev.getsockname()[1]
    with open(ready + '.tmp', 'w') as f:
        f.write('%s 127.0.0.1:%d %s\n' % ('127.0.0.1:%d' % d.getsockname()[1],
                                          lv.getsockname()[1], evil))
    os.rename(ready + '.tmp', ready)
    n = 0
    while True:
        r, _, _ = select.select([d, lv, ev], [], [])
        for s in r:
            c, _ = s.accept()
            n += 1
            if s is ev:
                log('evil', n)
                c.close()
                continue
            try:
                if s is d:
                    log('data', n)
                    data(c, n, mode, log, outdir, evil)
                else:
                    live(c, n, mode, log)
            except OSError as e:
                log('closed', n, e.strerror)
            c.close()


if __name__ == '__main__':
    main(sys.argv)
