package commands

import (
	"fmt"
	"github.com/cairnkv/cairn/scripting"
	"strings"
	"time"

	"github.com/cairnkv/cairn/notify"
	"github.com/cairnkv/cairn/server/resp"
)

// Dispatch runs one command for cl, writing its reply to w. It applies the
// checks Redis's processCommand applies, in the same order: unknown
// command, arity, unknown subcommand, authentication. Like Redis, it
// counts a command that runs in total_commands_processed and in its
// commandstats calls (failed ones, those that replied an error, apart),
// one refused by a check in its commandstats rejected_calls, and one
// queued by MULTI in neither (EXEC counts it when it runs).
//
// It also applies CLIENT REPLY (dropping the replies of a command run
// while replies are off or skipped) and CLIENT PAUSE (waiting before a
// command the pause holds back; a command of a pipelined group passed the
// pause with its group).
func (e *Env) Dispatch(cl *Client, w *resp.Writer, args [][]byte) {
	mark := w.Len()
	ran := e.dispatch(cl, w, args)
	if len(cl.readyLists) > 0 && cl.group == nil {
		e.serveReadyLists(cl)
	}
	if (cl.replyOff || cl.replySkip) && (ran == nil || !pushReplies[ran.Name]) {
		w.Truncate(mark)
	}
	cl.replySkip, cl.replySkipNext = cl.replySkipNext, false
	// CLIENT CACHING holds for the next command, or for the next
	// transaction; any CLIENT subcommand leaves it, as in Redis.
	if cl.trackCaching && cl.multi == nil && !strings.EqualFold(string(args[0]), "client") {
		cl.trackCaching = false
	}
}

// pushReplies are the commands whose replies are pushes (subscription
// confirmations), which Redis 7.0 sends even while CLIENT REPLY is off.
var pushReplies = map[string]bool{"subscribe": true, "psubscribe": true, "ssubscribe": true,
	"unsubscribe": true, "punsubscribe": true, "sunsubscribe": true}

// dispatch is Dispatch without CLIENT REPLY; it returns the command that
// ran, nil when none did (refused, queued, or given up while paused).
func (e *Env) dispatch(cl *Client, w *resp.Writer, args [][]byte) *Spec {
	now := time.Now()
	// reject replies with a refusal, counted against spec when there is
	// one; inside MULTI it also dooms the transaction, as Redis's
	// flagTransaction does. A refused EXEC discards the transaction (and
	// the WATCHes) and says why in an EXECABORT error, as Redis's
	// execCommandAbort does, giving the reason without its ERR code.
	reject := func(spec *Spec, msg string) {
		if spec != nil {
			spec.stats.rejected.Add(1)
		}
		if spec != nil && spec.Name == "exec" {
			cl.setMulti(nil)
			e.Clients.unwatch(cl)
			w.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
			return
		}
		if cl.multi != nil {
			cl.multi.dirty = true
		}
		w.Error(msg)
	}
	spec := Lookup(args[0])
	if spec == nil {
		reject(nil, unknownCommand(args))
		return nil
	}
	if !spec.ArityOK(len(args)) {
		reject(spec, fmt.Sprintf("ERR wrong number of arguments for '%s' command", spec.Name))
		return nil
	}
	if spec.Subcommands != nil && (len(args) > 1 || spec.Handler == nil) {
		sub := spec.Subcommands[strings.ToLower(string(args[1]))]
		if sub == nil {
			reject(nil, fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", truncate(args[1], 128), strings.ToUpper(spec.Name)))
			return nil
		}
		if !sub.ArityOK(len(args)) {
			reject(sub, fmt.Sprintf("ERR wrong number of arguments for '%s' command", sub.FullName()))
			return nil
		}
		spec = sub
	}
	if !cl.Authed && spec.Flags&FlagNoAuth == 0 {
		reject(spec, errNoAuth)
		return nil
	}
	if spec.Flags&FlagProtected != 0 && !e.Faults.enabled() {
		// Refused before it runs, as Redis refuses a protected command,
		// so that inside MULTI it dooms the transaction.
		reject(spec, errDebugDisabled)
		return nil
	}
	if spec.Flags&FlagAllowBusy == 0 {
		if busy := e.busyScript(cl); busy != "" {
			reject(spec, busy)
			return nil
		}
	}
	if cl.multi != nil && spec.Flags&FlagNoMulti != 0 {
		reject(spec, "ERR Command not allowed inside a transaction")
		return nil
	}
	if cl.subs > 0 && cl.Proto() == 2 && !subscribedModeAllowed[spec.parentName()] {
		reject(spec, subscribedModeError(spec.FullName()))
		return nil
	}
	if cl.monitoring.Load() && spec.Flags&(FlagWrite|FlagReadOnly|FlagMayReplicate) != 0 {
		reject(spec, "ERR Replica can't interact with the keyspace")
		return nil
	}
	if e.isReplica() {
		pFlags, declared := e.programFlags(spec, args)
		if withProgramFlags(spec.Flags, pFlags, declared)&FlagWrite != 0 {
			reject(spec, errReadOnly)
			return nil
		}
		stale := spec.Flags&FlagStale != 0 && (!declared || pFlags&scripting.FlagAllowStale != 0)
		if !stale && e.servesNoStaleData() {
			reject(spec, errMasterDown)
			return nil
		}
	}
	cl.Touch(spec.FullName(), now)
	if cl.group == nil {
		ok, waited := e.pause.enter(cl, e.pauseHolds(spec, args, cl))
		if !ok {
			return nil // closed or stopping while paused: the command never runs
		}
		if waited {
			// Checked again, as Redis processes a postponed command
			// again: the node may have become a replica meanwhile.
			e.pause.leave(cl)
			return e.dispatch(cl, w, args)
		}
		defer e.pause.leave(cl)
	}
	if cl.multi != nil && !immediateInMulti[spec.parentName()] {
		cl.queue(spec, args, w)
		return nil
	}
	if cl.group == nil && spec.Flags&FlagAllowBusy == 0 && e.scripts.pending.Load() > 0 {
		keys, all := lockedKeys(cl, spec, args)
		if busy := e.awaitScripts(cl, keys, all); busy != "" {
			reject(spec, busy)
			return nil
		}
	}
	// The client's one Ctx is reused: a command's context lives only
	// while its handler runs, and a client runs one command at a time.
	c := &cl.ctx
	*c = Ctx{Env: e, Client: cl, W: w, Args: args, Spec: spec, Now: now, txn: cl.group, locked: cl.group != nil,
		events: c.events, staged: c.staged, release: c.release}
	e.Stats.Commands.Add(1)
	cl.errorMark = w.Errors
	if cl.tracking.Load() {
		e.trackRead(cl, spec, args)
	}
	spec.Handler(c)
	// EXEC moves the mark past its commands' errors: it failed only if
	// it replied one of its own (EXECABORT), as in Redis.
	elapsed := time.Since(now)
	took := elapsed - c.blockedFor // a blocked command's wait is not its run time
	spec.stats.record(took, w.Errors > cl.errorMark, e.settings().latencyTracking.Bool())
	e.noteSlow(cl, spec, args, took, now)
	e.feedMonitors(cl, spec, args, now.Add(elapsed))
	*c = Ctx{events: notify.Recycle(c.events, maxReusedEvents), staged: notify.Recycle(c.staged, maxReusedEvents), release: c.release}
	return spec
}

// maxReusedEvents bounds the event slices a client's Ctx keeps from one
// command to the next.
const maxReusedEvents = 16

// unknownCommand renders Redis's unknown-command error; like Redis's
// "%s", it prints each argument up to its first NUL byte.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		fmt.Fprintf(&b, "'%s' ", truncate(cString(a), 128-b.Len()))
	}
	return fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", truncate(cString(args[0]), 128), b.String())
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
