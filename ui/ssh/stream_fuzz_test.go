package sshserve

import (
	"strings"
	"testing"
)

// FuzzParseStream: any exec command line a client sends is parsed without
// panicking; one that parses keeps its flags' bounds (--at with --follow
// never, a heartbeat within its limits).
func FuzzParseStream(f *testing.F) {
	for _, s := range []string{"snapshot --follow --json", "snapshot --at 2026-11-27T14:02:00Z --json",
		"snapshot --at=2026-11-27T14:02:00.123456789+09:00", "snapshot --follow --heartbeat 500ms", "snapshot --at"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 1024 {
			return
		}
		sp, err := parseStream(strings.Fields(line))
		if err != nil {
			return
		}
		if sp.follow && !sp.at.IsZero() {
			t.Fatalf("%q: --at with --follow accepted", line)
		}
		if sp.heartbeat < minHeartbeat || sp.heartbeat > maxHeartbeat {
			t.Fatalf("%q: heartbeat %s", line, sp.heartbeat)
		}
	})
}

// FuzzParseHistory: any history command line is parsed without panicking;
// one that parses names exactly one of device, kernel, user, each within
// its bound, and an ordered span.
func FuzzParseHistory(f *testing.F) {
	for _, s := range []string{"history --json --device cuda:0", "history --kernel=abc --since 2026-11-27T14:02:00Z --until 2026-11-27T15:02:00Z",
		"history --user u --device d", "history --since"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 2048 {
			return
		}
		q, err := parseHistory(strings.Fields(line))
		if err != nil {
			return
		}
		n := 0
		for _, v := range []string{q.Device, q.Kernel, q.User} {
			if v != "" {
				n++
			}
			if len(v) > maxHistoryArg {
				t.Fatalf("%q: a value of %d bytes", line, len(v))
			}
		}
		if n != 1 {
			t.Fatalf("%q: %d ids named", line, n)
		}
		if !q.Since.IsZero() && !q.Until.IsZero() && q.Until.Before(q.Since) {
			t.Fatalf("%q: until before since", line)
		}
	})
}
