package sshserve

import (
	"fmt"
	"path"
	"strings"
	"time"

	"charm.land/ssh"

	"github.com/fgtop/fgtop/engine/report"
)

// The snapshot stream: `ssh -p PORT node snapshot --follow --json` prints
// the node's fgtop.snapshot/v1 document, one compact line per real change
// (the same lines as `fgtop snapshot --follow --json`), with heartbeat
// lines while nothing changes. It is read-only: viewers and operators
// both may open it; it needs no terminal. `fgtop fleet --hosts` reads it.
const (
	// StreamCommand is the exec command of the stream (its flags follow).
	StreamCommand = "snapshot"
	// DefaultStreamHeartbeat is how often a quiet stream says it is alive.
	DefaultStreamHeartbeat = 2 * time.Second
	// minHeartbeat and maxHeartbeat bound --heartbeat: a client must not
	// make the server write a line every microsecond, and a reader needs
	// some line within a minute to tell a quiet node from a dead one.
	minHeartbeat = 100 * time.Millisecond
	maxHeartbeat = time.Minute
	// maxStreamArgs bounds the command line (it is a few words).
	maxStreamArgs = 8
)

// streamUsage is what a client that asks for anything else is told, after
// the "fgtop serve: " every refusal begins with (it said "fgtop serve:
// fgtop serve runs ...").
const streamUsage = "read-only commands only: the snapshot stream " +
	"`snapshot --follow --json [--heartbeat DUR]` (or `snapshot --json` for one document, `snapshot --at RFC3339 --json` for one from the node's record), " +
	"and `" + historyForm + "` from the node's record; for the console connect with `ssh -t` and no command"

// streamSpec is a parsed stream command.
type streamSpec struct {
	follow    bool
	heartbeat time.Duration
	// at is the moment of `snapshot --at TIME`: the document from the
	// node's record (zero: the live one).
	at time.Time
}

// commandOf is an exec request's command without a leading fgtop (a
// word whose last path element is fgtop): `ssh node fgtop snapshot
// --json` is how an operator who knows the local command types it, and
// `ssh -t node fgtop` asks for the console.
func commandOf(args []string) []string {
	if len(args) > 0 && path.Base(args[0]) == "fgtop" {
		return args[1:]
	}
	return args
}

// parseStream parses the exec command of a snapshot stream. Only the
// full-snapshot form exists here: it is what a fleet reads.
func parseStream(args []string) (streamSpec, error) {
	sp := streamSpec{heartbeat: DefaultStreamHeartbeat}
	switch {
	case len(args) > 0 && args[0] != StreamCommand:
		// Named, so that a typo is seen for what it is.
		return sp, fmt.Errorf("%q is not a command here; %s", truncate(args[0], 32), streamUsage)
	case len(args) == 0 || len(args) > maxStreamArgs:
		return sp, fmt.Errorf("%s", streamUsage)
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		switch name {
		case "--json", "--compact":
		case "--follow":
			sp.follow = true
		case "--at":
			if !hasVal {
				if i+1 >= len(args) {
					return sp, fmt.Errorf("--at needs a time (RFC 3339, e.g. 2026-11-27T14:02:00Z)")
				}
				i++
				val = args[i]
			}
			// RFC 3339 only: "14:02" or "-2h" would be read with the
			// node's clock and zone, not the asker's.
			t, err := time.Parse(time.RFC3339Nano, val)
			if err != nil {
				return sp, fmt.Errorf("--at %q: want an RFC 3339 time (2026-11-27T14:02:00Z)", truncate(val, 40))
			}
			sp.at = t
		case "--heartbeat":
			if !hasVal {
				if i+1 >= len(args) {
					return sp, fmt.Errorf("--heartbeat needs a duration (e.g. 2s)")
				}
				i++
				val = args[i]
			}
			d, err := time.ParseDuration(val)
			if err != nil || d < minHeartbeat || d > maxHeartbeat {
				return sp, fmt.Errorf("--heartbeat %q: want a duration from %s to %s", truncate(val, 32), minHeartbeat, maxHeartbeat)
			}
			sp.heartbeat = d
		default:
			return sp, fmt.Errorf("%q is not a flag here; %s", truncate(a, 32), streamUsage)
		}
	}
	if sp.follow && !sp.at.IsZero() {
		return sp, fmt.Errorf("--at and --follow are exclusive")
	}
	if !sp.follow && hasFlag(args, "--heartbeat") {
		return sp, fmt.Errorf("--heartbeat needs --follow")
	}
	return sp, nil
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stream serves an admitted snapshot stream until the client leaves, the
// session is cut (key removed, connection lifetime, shutdown) or a write
// fails (a client that stopped reading is dropped after the stuck
// timeout, see outQueue).
func (s *Server) stream(sess ssh.Session, ls *session, sp streamSpec) {
	sub := s.cfg.Subscribe(ls.ctx)
	f := report.Follower{}
	beat := time.NewTicker(sp.heartbeat)
	defer beat.Stop()
	write := func(b []byte) bool {
		if _, err := ls.out.Write(b); err != nil {
			ls.mu.Lock()
			ls.ended = "client gone"
			ls.mu.Unlock()
			return false
		}
		return true
	}
	for {
		select {
		case <-ls.ctx.Done():
			return
		case snap, ok := <-sub:
			if !ok {
				return
			}
			b, err := f.Line(snap)
			if err != nil {
				s.log.Error("snapshot stream", "remote", ls.id.Remote, "err", err.Error())
				return
			}
			if b == nil {
				continue
			}
			if !write(b) {
				return
			}
			if !sp.follow {
				// The one document goes out whole, if the client takes it
				// within the stuck timeout.
				ls.out.flush(s.stuck)
				ls.mu.Lock()
				ls.ended = "sent"
				ls.mu.Unlock()
				return
			}
			beat.Reset(sp.heartbeat)
		case now := <-beat.C:
			b, err := f.Heartbeat(now)
			if err == nil && !write(b) {
				return
			}
		}
	}
}

// recordAt answers `snapshot --at TIME`: one document from the node's
// own record, or why not, in the server's words on stderr (exit 1).
func (s *Server) recordAt(sess ssh.Session, ls *session, at time.Time) {
	fail := func(why string) {
		ls.mu.Lock()
		ls.reason = why
		ls.mu.Unlock()
	}
	if s.cfg.SnapshotAt == nil {
		fail(s.noRecord())
		return
	}
	b, err := s.cfg.SnapshotAt(ls.ctx, at)
	if err != nil {
		fail(err.Error())
		return
	}
	if _, err := ls.out.Write(b); err != nil {
		fail("client gone")
		return
	}
	ls.out.flush(s.stuck)
	ls.mu.Lock()
	ls.ended = "sent"
	ls.mu.Unlock()
}
