#!/usr/bin/env python3
"""DEL of one large value, and what it costs another client's writes.

Usage: del-stall.py PORT MEGABYTES REPS

REPS times: SET a value of MEGABYTES, then DEL it while a second
connection SETs small keys back to back; prints the median DEL time and
the median (and worst) of each round's slowest concurrent SET. Loopback
only; each round's writer runs ~0.2 s plus the DEL.
"""
import socket, sys, threading, time
def mk(port):
    return socket.create_connection(("127.0.0.1",port))
def cmd(s,*a):
    out=b'*%d\r\n'%len(a)
    for x in a:
        if isinstance(x,str): x=x.encode()
        out+=b'$%d\r\n%s\r\n'%(len(x),x)
    s.sendall(out)
    buf=b''
    while not buf.endswith(b'\r\n'):
        buf+=s.recv(65536)
    return buf
port=int(sys.argv[1]); size=int(sys.argv[2])<<20; reps=int(sys.argv[3])
s=mk(port); bg=mk(port)
v=b'x'*size
dels=[]; stalls=[]
for rep in range(reps):
    cmd(s,'SET','big',v)
    time.sleep(0.3)
    stop=[False]; lat=[]
    def loop():
        i=0
        while not stop[0]:
            t=time.time(); cmd(bg,'SET','k%d'%(i%1000),'v'); lat.append(time.time()-t); i+=1
    th=threading.Thread(target=loop); th.start(); time.sleep(0.1)
    t=time.time(); cmd(s,'DEL','big'); d=time.time()-t
    time.sleep(0.1); stop[0]=True; th.join()
    dels.append(d*1000); stalls.append(max(lat)*1000)
dels.sort(); stalls.sort()
print('%d MB: DEL ms median %.1f (min %.1f max %.1f); a concurrent SET\'s worst ms median %.1f (max %.1f)'%(size>>20, dels[len(dels)//2], dels[0], dels[-1], stalls[len(stalls)//2], stalls[-1]))
