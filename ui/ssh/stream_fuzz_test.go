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
