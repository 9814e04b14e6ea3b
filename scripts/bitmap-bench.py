#!/usr/bin/env python3
"""SETBIT and GETBIT at random offsets of one bitmap of BITS bits
(default 10,000,000: 1.25 MB; "bm", made afresh by SETBIT bm BITS-1 1),
10 requests in flight, against a Cairn on PORT and a redis-server on
7399 (REDIS_PORT overrides), both on 127.0.0.1: SETBITS SETBITs (default
2,000), then GETBITS GETBITs (default 20,000), per server. Prints
requests per second.

Usage: scripts/bitmap-bench.py CAIRN_PORT [SETBITS [GETBITS [BITS]]]
"""
import os
import socket, random, time, sys
def setup(port):
    s = socket.create_connection(("127.0.0.1", port))
    last = str(bits - 1).encode()
    s.sendall(b"*2\r\n$3\r\nDEL\r\n$2\r\nbm\r\n*4\r\n$6\r\nSETBIT\r\n$2\r\nbm\r\n$%d\r\n%s\r\n$1\r\n1\r\n" % (len(last), last))
    f = s.makefile("rb")
    f.readline()
    f.readline()
    s.close()
def run(port, n, cmd):
    s = socket.create_connection(("127.0.0.1", port))
    rnd = random.Random(1)
    reqs = []
    for i in range(n):
        off = str(rnd.randrange(bits)).encode()
        args = [cmd.encode(), b"bm", off] + ([str(i % 2).encode()] if cmd == "setbit" else [])
        reqs.append(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
    t = time.time()
    # batches of 10 in flight
    f = s.makefile("rb")
    for i in range(0, n, 10):
        s.sendall(b"".join(reqs[i:i+10]))
        for _ in reqs[i:i+10]:
            f.readline()
    return n / (time.time() - t)
setbits = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
getbits = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
bits = int(sys.argv[4]) if len(sys.argv) > 4 else 10000000
for port, name in ((int(sys.argv[1]), "cairn"), (int(os.environ.get("REDIS_PORT", "7399")), "redis")):
    setup(port)
    print(name, "setbit/s %.0f" % run(port, setbits, "setbit"), "getbit/s %.0f" % run(port, getbits, "getbit"))
