//go:build unix

package fleet

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/sshtest"
)

// floodNode is a hostile node on 127.0.0.1: its stream is one snapshot,
// then heartbeats as fast as the connection takes them.
func floodNode(t *testing.T, first []byte) string {
	t.Helper()
	addr, _ := sshtest.StreamPeer(t, first, 0)
	return addr
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestHeartbeatFloodIsRateLimited repeats issue 23's heartbeat flood (the
// fleet at 95-119 % CPU): the node's lines are read at most MaxLines a
// second, its stream held back meanwhile, and the node is marked.
func TestHeartbeatFloodIsRateLimited(t *testing.T) {
	s := bigSnapshot(4, 0, 1)
	s.Node = "flooder"
	var f report.Follower
	first, err := f.Line(s)
	if err != nil {
		t.Fatal(err)
	}
	addr := floodNode(t, first)
	cfg := &gossh.ClientConfig{User: "t", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewKey(t).Signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()} //nolint:gosec // a test node on loopback
	tr := NewTracker([]string{addr}, "ssh", Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = tr.Run(ctx) }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		FollowSSH(ctx, tr, addr, cfg, SSHOptions{Heartbeat: time.Second})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := tr.Latest().Node(addr)
		if n != nil && n.Snap != nil && strings.Contains(n.Note, "floods lines") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the flooding node was never marked: %+v", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Under the flood from now on: the client's CPU stays low (the
	// server's writes block on the window the client keeps closed).
	cpu0, t0 := cpuTime(), time.Now()
	time.Sleep(3 * time.Second)
	used, wall := cpuTime()-cpu0, time.Since(t0)
	t.Logf("under the flood: %s CPU in %s (%.0f %%)", used.Round(time.Millisecond), wall.Round(time.Millisecond), 100*used.Seconds()/wall.Seconds())
	// Unlimited, the flood keeps a core busy (98 % measured); limited,
	// 6 %. The race detector multiplies what is left, and the flooding
	// server runs in this process too, so under -race the bound is a
	// half of a core, still far below a busy one.
	limit := wall / 4
	if raceOn {
		limit = wall / 2
	}
	if used > limit {
		t.Fatalf("the flood costs %s CPU in %s (limit %s)", used, wall, limit)
	}
	n := tr.Latest().Node(addr)
	if n.State != Live || n.Name != "flooder" {
		t.Fatalf("node %s %s: want it live", n.Name, n.State)
	}
	cancel()
	<-done
}
