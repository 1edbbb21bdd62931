package sshserve

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/sshtest"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// TestSnapshotStream: a viewer's key opens the read-only stream without a
// terminal; it gets the snapshot, heartbeats while nothing changes, a line
// per change, and is cut when its key is removed.
func TestSnapshotStream(t *testing.T) {
	f := startServer(t, nil)
	_, sess := f.session(t, "victor", f.viewer)
	out, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	sess.Stderr = &stderr
	if err := sess.Start("snapshot --follow --json --heartbeat 200ms"); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, report.MaxLine)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() (*report.Snapshot, *report.Heartbeat) {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended; stderr %q", stderr.String())
			}
			doc, hb, err := report.ParseLine([]byte(l))
			if err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			return doc, hb
		case <-time.After(waitFor):
			t.Fatal("no line")
		}
		return nil, nil
	}
	doc, _ := next()
	if doc == nil || doc.Node != "gpu-node01" || len(doc.Devices) == 0 {
		t.Fatalf("first line: %+v", doc)
	}
	if _, hb := next(); hb == nil {
		t.Fatal("no heartbeat while nothing changed")
	}
	s2 := *fake.Node(fake.Options{})
	s2.Node = "gpu-node02"
	f.pub.Publish(&s2)
	for {
		doc, _ := next()
		if doc != nil {
			if doc.Node != "gpu-node02" {
				t.Fatalf("change: node %q", doc.Node)
			}
			break
		}
	}
	if f.srv.SessionCount() != 1 {
		t.Fatalf("sessions %d, want the stream counted", f.srv.SessionCount())
	}
	// The key goes: the stream is cut, and told why.
	sshtest.WriteAtomic(t, f.keysPath, f.operator.AuthLine(sshtest.OperatorOption, "olga@ops"))
	deadline := time.After(waitFor)
	for open := true; open; {
		select {
		case _, open = <-lines:
		case <-deadline:
			t.Fatal("stream not cut after its key was removed")
		}
	}
	_ = sess.Wait()
	if !strings.Contains(stderr.String(), "your key was removed") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

func TestStreamCommands(t *testing.T) {
	cases := []struct {
		cmd, err string
		follow   bool
		hb       time.Duration
	}{
		{"snapshot --follow --json", "", true, DefaultStreamHeartbeat},
		{"snapshot --json", "", false, DefaultStreamHeartbeat},
		{"snapshot --follow --heartbeat=5s", "", true, 5 * time.Second},
		{"snapshot --follow --heartbeat 1ns", "--heartbeat", false, 0},
		{"snapshot --follow --heartbeat", "needs a duration", false, 0},
		{"snapshot --heartbeat 2s", "needs --follow", false, 0},
		{"snapshot --config /etc/passwd", `"--config" is not a flag here; read-only commands only: the snapshot stream`, false, 0},
		{"cat /etc/passwd", `"cat" is not a command here; read-only commands only: the snapshot stream`, false, 0},
		{"snapshot --at 2026-11-27T14:02:00Z --json", "", false, DefaultStreamHeartbeat},
		{"snapshot --at=2026-11-27T14:02:00.5+09:00 --json", "", false, DefaultStreamHeartbeat},
		{"snapshot --at 14:02 --json", "want an RFC 3339 time", false, 0},
		{"snapshot --at -2h --json", "want an RFC 3339 time", false, 0},
		{"snapshot --json --at", "--at needs a time", false, 0},
		{"snapshot --follow --at 2026-11-27T14:02:00Z", "exclusive", false, 0},
	}
	for _, c := range cases {
		sp, err := parseStream(strings.Fields(c.cmd))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err %v, want %q", c.cmd, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.cmd, err)
		case c.err == "" && (sp.follow != c.follow || sp.heartbeat != c.hb):
			t.Errorf("%q: %+v", c.cmd, sp)
		case c.err == "" && strings.Contains(c.cmd, "--at") != !sp.at.IsZero():
			t.Errorf("%q: at %v", c.cmd, sp.at)
		}
	}
}
