package commands

import (
	"sync"
	"time"
)

// SAVE, BGSAVE and LASTSAVE. Cairn's data is always on disk in Pebble, so
// there is no snapshot to write: a save makes every write acknowledged so
// far durable (one WAL fsync, storage.Engine.SyncCommitted), which is what
// `rocksdb.write_options.sync no` otherwise leaves to the background sync.
// INFO persistence reports saves as Redis names them; its
// rdb_changes_since_last_save counts committed batches.

func init() {
	register(
		&Spec{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagNoMulti, Group: "server", Since: "1.0.0", Summary: "Makes every acknowledged write durable on disk.", Handler: cmdSave},
		&Spec{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading, Group: "server", Since: "1.0.0", Summary: "Makes every acknowledged write durable on disk, in the background.", Handler: cmdBgSave},
		&Spec{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Tips: []string{"nondeterministic_output"}, Group: "server", ACL: []string{"admin", "dangerous"}, Since: "1.0.0", Summary: "Returns the Unix timestamp of the last successful save to disk.", Handler: cmdLastSave},
	)
}

// saveState is what INFO persistence and LASTSAVE report of the saves.
type saveState struct {
	mu         sync.Mutex
	running    bool      // a BGSAVE is in progress
	started    time.Time // of the running BGSAVE
	last       time.Time // the last successful save (start-up until one)
	lastOffset uint64    // the offset the last successful save covered
	failed     bool      // the last BGSAVE failed
	lastTook   time.Duration
	count      int64 // successful saves
}

// save makes the committed batches durable and records the result.
func (e *Env) save() error {
	start := time.Now()
	off, err := e.Store.SyncCommitted()
	s := &e.saves
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastTook = time.Since(start)
	s.failed = err != nil
	if err == nil {
		s.last, s.lastOffset = start, off
		s.count++
	}
	return err
}

func cmdSave(c *Ctx) {
	c.Env.saves.mu.Lock()
	running := c.Env.saves.running
	c.Env.saves.mu.Unlock()
	if running {
		c.W.Error("ERR Background save already in progress")
		return
	}
	if err := c.Env.save(); err != nil {
		c.storageError(err)
		return
	}
	c.W.OK()
}

func cmdBgSave(c *Ctx) {
	schedule := false
	if len(c.Args) > 1 {
		if len(c.Args) != 2 || keyword(c.Args[1]) != "schedule" {
			c.W.Error(errSyntax)
			return
		}
		schedule = true
	}
	s := &c.Env.saves
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		if schedule {
			// The running save covers every write acknowledged before
			// this reply's, so there is nothing left to schedule.
			c.W.SimpleString("Background saving scheduled")
			return
		}
		c.W.Error("ERR Background save already in progress")
		return
	}
	s.running, s.started = true, time.Now()
	s.mu.Unlock()
	env := c.Env // c is reused once the handler returns
	go func() {
		if err := env.save(); err != nil {
			env.Log.Error("background save failed", "error", err)
		}
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	if c.inExec() {
		// Redis defers a BGSAVE run by EXEC until the transaction ends;
		// Cairn's save starts now, from a checkpoint that holds every
		// committed write, but the reply is Redis's.
		c.W.SimpleString("Background saving scheduled")
		return
	}
	c.W.SimpleString("Background saving started")
}

func cmdLastSave(c *Ctx) {
	c.Env.saves.mu.Lock()
	last := c.Env.saves.last
	c.Env.saves.mu.Unlock()
	if last.IsZero() {
		last = c.Env.Started
	}
	c.W.Int(last.Unix())
}

// persistenceFields writes INFO persistence's save fields.
func (e *Env) persistenceFields(field func(string, any)) {
	s := &e.saves
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.last
	if last.IsZero() {
		last = e.Started
	}
	running, current := 0, int64(-1)
	if s.running {
		running, current = 1, int64(time.Since(s.started).Seconds())
	}
	lastTook := int64(-1)
	if s.count > 0 || s.failed {
		lastTook = int64(s.lastTook.Seconds())
	}
	status := "ok"
	if s.failed {
		status = "err"
	}
	field("rdb_changes_since_last_save", e.Store.Offset()-s.lastOffset)
	field("rdb_bgsave_in_progress", running)
	field("rdb_last_save_time", last.Unix())
	field("rdb_last_bgsave_status", status)
	field("rdb_last_bgsave_time_sec", lastTook)
	field("rdb_current_bgsave_time_sec", current)
	field("rdb_saves", s.count)
}
