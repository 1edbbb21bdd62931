package sshserve

import (
	"errors"
	"fmt"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model/names"
)

// HistoryCommand is the exec command that asks a node's record who held
// what: `history --json (--device ID|--kernel ID|--user ID) [--since
// RFC3339] [--until RFC3339]`, the fgtop.history/v1 document of `fgtop
// history --json`. `fgtop fleet history` fans it out over the fleet.
const HistoryCommand = "history"

// maxHistoryArg bounds one value of the history command (an id or a time).
const maxHistoryArg = 256

// HistoryQuery is a parsed history command.
type HistoryQuery struct {
	Device, Kernel, User string
	// Since and Until bound the span (zero: open).
	Since, Until time.Time
}

const historyUsage = "history takes `" + historyForm + "`"

// historyForm is the history command's one form, as the usages give it.
const historyForm = "history --json (--device ID|--kernel ID|--user ID) [--since RFC3339] [--until RFC3339]"

// parseHistory parses the exec command of a history query. Times are
// RFC 3339 only: "14:02" or "-2h" would be read with the node's clock and
// zone, not the asker's.
func parseHistory(args []string) (HistoryQuery, error) {
	var q HistoryQuery
	if len(args) == 0 || args[0] != HistoryCommand || len(args) > 2*maxStreamArgs {
		return q, fmt.Errorf("%s", historyUsage)
	}
	named := 0
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--json" {
			continue
		}
		name, val, hasVal := cutFlag(a)
		if !hasVal {
			if i+1 >= len(args) {
				return q, fmt.Errorf("%s needs a value: %s", truncate(name, 32), historyUsage)
			}
			i++
			val = args[i]
		}
		if val == "" {
			return q, fmt.Errorf("%s needs a value: %s", truncate(name, 32), historyUsage)
		}
		if len(val) > maxHistoryArg {
			return q, fmt.Errorf("%s: a value longer than %d bytes", name, maxHistoryArg)
		}
		switch name {
		case "--device":
			q.Device, named = val, named+1
		case "--kernel":
			q.Kernel, named = val, named+1
		case "--user":
			q.User, named = val, named+1
		case "--since", "--until":
			t, err := time.Parse(time.RFC3339Nano, val)
			if err != nil {
				return q, fmt.Errorf("%s %q: want an RFC 3339 time (2026-11-27T14:02:00Z)", name, truncate(val, 40))
			}
			if name == "--since" {
				q.Since = t
			} else {
				q.Until = t
			}
		default:
			return q, fmt.Errorf("%q: %s", truncate(a, 32), historyUsage)
		}
	}
	if named != 1 {
		return q, fmt.Errorf("name one of --device, --kernel, --user: %s", historyUsage)
	}
	if err := history.SpanOrder(q.Since, q.Until, "", time.Time{}); err != nil {
		return q, err
	}
	return q, nil
}

func cutFlag(a string) (name, val string, hasVal bool) {
	for i := 0; i < len(a); i++ {
		if a[i] == '=' {
			return a[:i], a[i+1:], true
		}
	}
	return a, "", false
}

// noRecord says why this node answers from no record, and the way on:
// FGTOP_HISTORY=off in the server's environment is named as such, not as
// a flag nobody gave; a node whose files are the demo's (UI.Unrecorded)
// as that, or the operator would look for a missing --history.
func (s *Server) noRecord() string {
	if s.cfg.UI.Unrecorded != "" {
		return "this node keeps no record: its files are fgtop demo's, whose made-up kernels are kept out of this host's history; run fgtop serve with --history DIR to record them"
	}
	if s.cfg.UI.HistoryOffByEnv {
		return "this node keeps no record: FGTOP_HISTORY=off is set in fgtop serve's environment; unset it, or run fgtop serve with --history DIR"
	}
	return "this node keeps no record: run fgtop serve with --history DIR, or fgtop record beside it"
}

// history answers a history query from the node's own record: the
// document on stdout, and what the record lacks of the span on stderr
// (exit 1), as `fgtop history --json` does.
func (s *Server) history(ls *session, q HistoryQuery) {
	fail := func(why string) {
		ls.mu.Lock()
		ls.reason = why
		ls.mu.Unlock()
	}
	if s.cfg.History == nil {
		fail(s.noRecord())
		return
	}
	b, problem := s.cfg.History(ls.ctx, q)
	if len(b) > 0 {
		if _, err := ls.out.Write(b); err != nil {
			fail("client gone")
			return
		}
		ls.out.flush(s.stuck)
	}
	if problem != nil {
		var nf *names.NotFoundError
		var amb *names.AmbiguousError
		if len(b) == 0 && (errors.As(problem, &nf) || errors.As(problem, &amb)) {
			// Not this node's, or a prefix naming several here (fleet
			// history asks every node): the asker's to fix, said apart
			// from a record that could not answer, as `history` exits 2.
			ls.mu.Lock()
			ls.usage = true
			ls.mu.Unlock()
		}
		fail(problem.Error())
		return
	}
	ls.mu.Lock()
	ls.ended = "sent"
	ls.mu.Unlock()
}
