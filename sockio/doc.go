// Package sockio reads and writes TCP sockets with raw system calls.
//
// Go's net package brackets every read(2) and write(2) with the
// scheduler's syscall hooks: the goroutine's P is released for the
// duration, the runtime's monitor thread is woken if it was asleep, and a
// call that lasts past the monitor's next tick (20 µs when busy) hands the
// P to another OS thread. A socket is non-blocking, so those calls never
// wait: a loopback write spends its time running the receiver's TCP path,
// which is CPU work the process must do anyway. On one CPU the hooks only
// add thread switches: with a primary and a replica sharing a core at
// 5,000 writes/s, the replica spent more than a quarter of its CPU in the
// monitor thread alone (docs/performance.md). Conn issues the calls
// through syscall.RawConn with raw system calls instead, so the goroutine
// keeps its P; waiting for readiness, deadlines and Close behave exactly
// as with net.Conn, as the net package's own poller still does the
// waiting.
//
// A Conn is safe for one reader and one writer at a time, like the
// net.Conn it wraps; the caller keeps ownership of that net.Conn (its
// deadlines, Close, addresses). Under the race detector, raw calls do not
// order memory between a writer and a reader of the socket the way
// syscall.Read and syscall.Write tell it to; nothing in Cairn relies on
// that ordering.
//
// On systems other than Unix ones (Windows) a Conn simply calls the
// net.Conn it wraps.
package sockio
