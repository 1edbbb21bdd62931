package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
	sshserve "github.com/fgtop/fgtop/ui/ssh"
)

// TestServeNodeNameReadsTheHostsRecord: serve --node NAME beside `fgtop
// record` (contrib/fgtop-record.service, which names the node by its host
// name) answers fleet --at and fleet history from that record: the record
// is this host's, under the name record gives it. It refused it as
// "another node's directory".
func TestServeNodeNameReadsTheHostsRecord(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skip("no host name")
	}
	n := newNode(t)
	dir := filepath.Join(t.TempDir(), "history")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	now := t0
	// The recorder beside serve: it holds the directory's lock all along.
	rec, err := history.Open(history.Options{Dir: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	for i := range 5 {
		now = t0.Add(time.Duration(i) * time.Minute)
		rec.Observe(&model.Snapshot{Seq: uint64(i + 1), Time: now, Node: host})
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}

	sf, _ := demoServeFlags(t)
	sf.demo, sf.node = false, host+"-alias"
	cfgc := make(chan sshserve.Config, 1)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		ended <- runServe(ctx, serveRun{src: &sourceFlags{config: n.config, devices: n.mock, mockEtcd: n.etcd},
			console: &consoleFlags{ascii: true, theme: "dark", history: dir}, serve: sf, stderr: io.Discard,
			configured: func(c sshserve.Config) { cfgc <- c }})
	}()
	defer func() {
		cancel()
		select {
		case <-ended:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	var cfg sshserve.Config
	select {
	case cfg = <-cfgc:
	case err := <-ended:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	if cfg.SnapshotAt == nil || cfg.History == nil {
		t.Fatal("serve with --history answers no snapshot --at or history")
	}
	b, err := cfg.SnapshotAt(ctx, t0.Add(2*time.Minute))
	if err != nil || !strings.Contains(string(b), host) {
		t.Errorf("snapshot --at from the host's record: %v: %s", err, b)
	}
	if _, err := cfg.History(ctx, sshserve.HistoryQuery{User: "nobody"}); err != nil && strings.Contains(err.Error(), "not of this node") {
		t.Errorf("history from the host's record: %v", err)
	}
}
