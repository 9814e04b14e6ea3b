#!/usr/bin/env python3
"""APPENDs N pieces of SIZE bytes (default 4000 of 1024) one at a time to
a fresh key on 127.0.0.1:PORT, as a log kept in one string grows, and
prints the seconds they took: the cost of an append must not grow with
the value.

Usage: scripts/append-growth.py PORT [N [SIZE]]
"""
import socket, sys, time

port = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
size = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
key = b"append-growth"
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")
s.sendall(b"*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n" % (len(key), key))
f.readline()
cmd = b"*3\r\n$6\r\nAPPEND\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, size, b"x" * size)
start = time.time()
for _ in range(n):
    s.sendall(cmd)
    reply = f.readline()
    if not reply.startswith(b":"):
        sys.exit("APPEND: " + reply.decode())
print(f"{n} appends of {size} bytes (to {n * size} bytes): {time.time() - start:.2f} s")
