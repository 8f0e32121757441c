#!/usr/bin/env python3
# The workload of `make demo`: small TCP requests and replies between nodes.
#
#   demo-app.py server NAME ADDR PORT READYFILE
#   demo-app.py client NAME COUNT INTERVAL ADDR:PORT...
#
# Request k (1, 2, ...) carries 100 + k bytes of TCP payload and its reply
# 1000 + k bytes, so each segment of the recorded TCP traffic says which
# request it belongs to. The server works 1 ms before it replies. Every
# message is framed by a 4-byte length. The process renames itself NAME
# (its comm, as the kernel's scheduler events show it).
import ctypes
import socket
import struct
import sys
import time


def rename(name):
	try:
		libc = ctypes.CDLL(None)
		libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
	except OSError:
		pass


def recv_exact(c, n):
	buf = b""
	while len(buf) < n:
		d = c.recv(n - len(buf))
		if not d:
			return None
		buf += d
	return buf


def recv_msg(c):
	h = recv_exact(c, 4)
	if h is None:
		return None
	(n,) = struct.unpack("!I", h)
	return recv_exact(c, n - 4)


def msg(n, fill):
	return struct.pack("!I", n) + fill * (n - 4)


def server(name, addr, port, ready):
	rename(name)
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind((addr, port))
	s.listen(4)
	with open(ready, "w") as f:
		f.write("ready\n")
	c, _ = s.accept()
	c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
	served = 0
	while True:
		req = recv_msg(c)
		if req is None:
			break
		k = len(req) + 4 - 100
		time.sleep(0.001)  # the work
		c.sendall(msg(1000 + k, b"r"))
		served += 1
	print("%s: served %d requests" % (name, served), flush=True)


def connect(hp):
	addr, port = hp.rsplit(":", 1)
	for _ in range(200):  # the server may not listen yet: 4 s at most
		try:
			c = socket.create_connection((addr, int(port)), timeout=5)
			c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
			return c
		except OSError:
			time.sleep(0.02)
	sys.exit("%s: cannot connect" % hp)


def client(name, count, interval, servers):
	rename(name)
	conns = [connect(hp) for hp in servers]
	worst = 0.0
	for k in range(1, count + 1):
		c = conns[(k - 1) % len(conns)]
		t = time.monotonic()
		c.sendall(msg(100 + k, b"q"))
		rep = recv_msg(c)
		if rep is None or len(rep) + 4 != 1000 + k:
			sys.exit("%s: bad reply to request %d" % (name, k))
		worst = max(worst, time.monotonic() - t)
		time.sleep(interval)
	for c in conns:
		c.close()
	print("%s: %d requests to %d servers, slowest %.1f ms" %
	      (name, count, len(conns), worst * 1000), flush=True)


if __name__ == "__main__":
	a = sys.argv[1:]
	if len(a) == 5 and a[0] == "server":
		server(a[1], a[2], int(a[3]), a[4])
	elif len(a) >= 5 and a[0] == "client":
		client(a[1], int(a[2]), float(a[3]), a[4:])
	else:
		sys.exit(__doc__ or "usage: demo-app.py server|client ...")
