package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairnkv/cairn/server/resp"
)

// Dispatch runs one command for cl, writing its reply to w. It applies the
// checks Redis's processCommand applies, in the same order: unknown
// command, arity, unknown subcommand, authentication.
func (e *Env) Dispatch(cl *Client, w *resp.Writer, args [][]byte) {
	now := time.Now()
	e.Stats.Commands.Add(1)
	spec := Lookup(args[0])
	if spec == nil {
		e.Stats.ErrorReplies.Add(1)
		w.Error(unknownCommand(args))
		return
	}
	if !spec.ArityOK(len(args)) {
		e.Stats.ErrorReplies.Add(1)
		w.Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", spec.Name))
		return
	}
	if spec.Subcommands != nil && (len(args) > 1 || spec.Handler == nil) {
		sub := spec.Subcommands[strings.ToLower(string(args[1]))]
		if sub == nil {
			e.Stats.ErrorReplies.Add(1)
			w.Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", truncate(args[1], 128), strings.ToUpper(spec.Name)))
			return
		}
		if !sub.ArityOK(len(args)) {
			e.Stats.ErrorReplies.Add(1)
			w.Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", sub.FullName()))
			return
		}
		spec = sub
	}
	if !cl.Authed && spec.Flags&FlagNoAuth == 0 {
		e.Stats.ErrorReplies.Add(1)
		w.Error(errNoAuth)
		return
	}
	if cl.subs > 0 && cl.Proto() == 2 && !subscribedModeAllowed[spec.parentName()] {
		e.Stats.ErrorReplies.Add(1)
		w.Error(subscribedModeError(spec.FullName()))
		return
	}
	if e.Repl != nil && e.Repl.IsReplica() {
		if spec.Flags&FlagWrite != 0 {
			e.Stats.ErrorReplies.Add(1)
			w.Error(errReadOnly)
			return
		}
		if spec.Flags&FlagStale == 0 && !e.Config.Bool("slave-serve-stale-data") {
			if ls, ok := e.Repl.Link(); ok && (!ls.Up || ls.SyncInProgress) {
				e.Stats.ErrorReplies.Add(1)
				w.Error(errMasterDown)
				return
			}
		}
	}
	cl.Touch(spec.FullName(), now)
	spec.Handler(&Ctx{Env: e, Client: cl, W: w, Args: args, Spec: spec, Now: now})
}

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
