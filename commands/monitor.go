package commands

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func init() {
	register(&Spec{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Group: "server", Since: "1.0.0", Summary: "Listens for all requests received by the server in real-time.", Handler: cmdMonitor})
}

// monitorSet holds the clients in MONITOR mode. Every command that ran
// (admin commands apart, as in Redis) is shown to each of them as one
// line, from the goroutine that ran it; a client in a namespace sees only
// the commands of its namespace's clients.
type monitorSet struct {
	n       atomic.Int32 // len(clients), read on every command
	mu      sync.Mutex
	clients []*Client
}

func (m *monitorSet) add(cl *Client) {
	m.mu.Lock()
	m.clients = append(m.clients, cl)
	m.n.Store(int32(len(m.clients)))
	m.mu.Unlock()
}

// remove forgets cl (RESET, or the connection closing).
func (m *monitorSet) remove(cl *Client) {
	m.mu.Lock()
	for i, x := range m.clients {
		if x == cl {
			m.clients = append(m.clients[:i], m.clients[i+1:]...)
			break
		}
	}
	m.n.Store(int32(len(m.clients)))
	m.mu.Unlock()
}

// feedMonitors shows cl's command args, run by spec, to the monitors.
func (e *Env) feedMonitors(cl *Client, spec *Spec, args [][]byte, now time.Time) {
	if spec.Flags&(FlagAdmin|FlagSkipMonitor) != 0 {
		return
	}
	e.feedMonitorsFrom(cl, cl.Addr, spec, args, now)
}

// feedMonitorsFrom shows a command of cl's to the monitors as run by from:
// the client's address, or "lua" for the commands of its script.
func (e *Env) feedMonitorsFrom(cl *Client, from string, spec *Spec, args [][]byte, now time.Time) {
	if e.monitors.n.Load() == 0 {
		return
	}
	line := monitorLine(from, spec, args, now)
	e.monitors.mu.Lock()
	defer e.monitors.mu.Unlock()
	for _, m := range e.monitors.clients {
		if m.Admin || m.Namespace == cl.Namespace {
			m.Push(line)
		}
	}
}

// monitorLine renders a command as Redis shows it to monitors: a status
// reply with the time, the database and the client's address, then each
// argument quoted and escaped (passwords redacted).
func monitorLine(from string, spec *Spec, args [][]byte, now time.Time) []byte {
	b := make([]byte, 0, 64)
	b = append(b, '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := now.Nanosecond() / 1000
	for d := 100000; d > 1 && us < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(us), 10)
	b = append(b, " [0 "...)
	b = append(b, from...)
	b = append(b, ']')
	redact := redactedArgs(spec, args)
	for i, a := range args {
		b = append(b, ' ')
		if redact[i] {
			b = append(b, `"(redacted)"`...)
			continue
		}
		b = appendRepr(b, a)
	}
	return append(b, '\r', '\n')
}

// appendRepr appends s quoted as Redis's sdscatrepr does.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if c >= 0x20 && c <= 0x7e {
				b = append(b, c)
			} else {
				b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
			}
		}
	}
	return append(b, '"')
}

// cmdMonitor makes the connection a monitor: its output goes through its
// queue from now on, like a subscriber's.
func cmdMonitor(c *Ctx) {
	cl := c.Client
	if c.txn != nil {
		c.W.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if cl.monitoring.Load() {
		return // already one: Redis replies nothing
	}
	if cl.Push == nil {
		c.W.Error("ERR MONITOR is not supported on this connection")
		return
	}
	cl.startQueuedOutput()
	cl.monitoring.Store(true)
	c.Env.monitors.add(cl)
	c.W.OK()
}

// StopMonitoring takes cl out of MONITOR mode (RESET; the server calls it
// when the connection closes).
func (e *Env) StopMonitoring(cl *Client) {
	if cl.monitoring.Swap(false) {
		e.monitors.remove(cl)
	}
}
