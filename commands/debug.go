package commands

import (
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/storage"
)

func init() {
	register(&Spec{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagProtected, Group: "server", Since: "1.0.0",
		Summary: "Test-only fault injection (enabled by CAIRN_DEBUG_FAULTS=1 at start-up).", Handler: cmdDebug})
}

// Faults are the test-only fault hooks of the write path. They exist so
// end-to-end tests can make a commit fail for real, or hold a committed
// write before it publishes, without mocking storage. The server enables
// the DEBUG command that sets them only when started with
// CAIRN_DEBUG_FAULTS=1.
type Faults struct {
	// Enabled turns the DEBUG command on.
	Enabled bool
	// failCommits is how many of the next commits fail.
	failCommits atomic.Int64
	// pauseMillis holds the next committed write this long before it
	// publishes its events and releases its keys.
	pauseMillis atomic.Int64
}

// enabled reports whether the DEBUG command is on; f may be nil.
func (f *Faults) enabled() bool { return f != nil && f.Enabled }

// install wires the commit fault into the engine.
func (f *Faults) install(store *storage.Engine) {
	store.SetCommitFault(func(*storage.Batch) error {
		for {
			n := f.failCommits.Load()
			if n <= 0 {
				return nil
			}
			if f.failCommits.CompareAndSwap(n, n-1) {
				return storage.ErrInjectedFault
			}
		}
	})
}

// afterCommit applies a requested pause, once.
func (f *Faults) afterCommit() {
	if f == nil {
		return
	}
	if ms := f.pauseMillis.Swap(0); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

// InstallFaults enables the DEBUG fault hooks on env (tests only).
func (e *Env) InstallFaults() {
	e.Faults = &Faults{Enabled: true}
	e.Faults.install(e.Store)
}

const errDebugDisabled = "ERR DEBUG command not allowed. Cairn enables it only for tests (CAIRN_DEBUG_FAULTS=1 at start-up)."

// cmdDebug implements DEBUG COMMIT-FAULT <n> (the next n commits fail as
// a storage fault would), DEBUG COMMIT-PAUSE <ms> (the next committed
// write waits before it publishes and releases its keys) and DEBUG
// WAL-FAULT 1 and DEBUG TABLE-FAULT 1 (the next write or sync of the WAL,
// or the next write of an sstable, fails as on a failing or full disk,
// which is fatal: the server exits with status 1). DEBUG CHECK-VALUES
// replies with the number of chunk records of long strings, or an error
// naming one that belongs to no value or lies past its end
// (storage.Engine.CheckValues).
func cmdDebug(c *Ctx) {
	f := c.Env.Faults // enabled: Dispatch refuses DEBUG otherwise
	if len(c.Args) == 2 && lower(c.Args[1]) == "check-values" {
		n, err := c.Env.Store.CheckValues()
		if err != nil {
			c.errorf("ERR %v", err)
			return
		}
		c.W.Int(int64(n))
		return
	}
	if len(c.Args) != 3 {
		c.W.Error(errSyntax)
		return
	}
	n, ok := c.intArg(2)
	if !ok {
		return
	}
	switch lower(c.Args[1]) {
	case "commit-fault":
		f.failCommits.Store(n)
	case "commit-pause":
		f.pauseMillis.Store(n)
	case "wal-fault":
		if n > 0 {
			c.Env.Store.InjectWALFault()
		}
	case "table-fault":
		if n > 0 {
			c.Env.Store.InjectTableFault()
		}
	default:
		c.W.Error(errSyntax)
		return
	}
	c.W.OK()
}
