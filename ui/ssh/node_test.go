package sshserve

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/internal/sshtest"
)

func TestServeNode(t *testing.T) {
	dir := t.TempDir()
	keysPath := filepath.Join(dir, "authorized_keys")
	sshtest.WriteAtomic(t, keysPath, sshtest.NewKeys(t).AuthorizedKeys())
	inv := enginetest.MockSource(t)
	defer inv.Close()
	eopts := engine.Options{Node: "n1", Inventory: inv, Roots: []scratch.Root{{Path: t.TempDir(), Agent: "a0"}}}
	started := errors.New("the metrics endpoint stopped")
	var log bytes.Buffer
	for _, tt := range []struct {
		name  string
		tweak func(o *NodeOptions, cancel func())
		// served: the server served (Stopping is called).
		served bool
		// err is a part of the error's words; "" for none.
		err   string
		check func(error) bool
	}{
		{"serves until stopped", nil, true, "", nil},
		{"a record's answers", func(o *NodeOptions, cancel func()) { o.Config.UI.History = dir; o.Self = []string{"n1"} }, true, "", nil},
		{"a configuration New refuses", func(o *NodeOptions, cancel func()) { o.Config.AuthorizedKeys = "" }, false, "no authorized_keys file",
			func(err error) bool { var ce *ConfigError; return errors.As(err, &ce) }},
		{"an address it cannot listen on", func(o *NodeOptions, cancel func()) { o.Listen = "127.0.0.1:99999" }, false, "127.0.0.1:99999",
			func(err error) bool { var le *ListenError; return errors.As(err, &le) && le.Addr == "127.0.0.1:99999" }},
		{"what Started started fails to start", func(o *NodeOptions, cancel func()) {
			o.Started = func(*engine.Engine) (<-chan error, func(), error) { return nil, nil, started }
		}, false, started.Error(), nil},
		{"what Started started stops", func(o *NodeOptions, cancel func()) {
			c := make(chan error, 1)
			c <- started
			o.Started = func(*engine.Engine) (<-chan error, func(), error) { return c, nil, nil }
		}, true, started.Error(), nil},
		{"the demo node ends", func(o *NodeOptions, cancel func()) {
			done := make(chan struct{})
			close(done)
			o.NodeDone, o.NodeErr = done, func() error { return nil }
			o.Listening = nil
		}, true, "", nil},
		{"the demo node fails: its last state is served on", func(o *NodeOptions, cancel func()) {
			done := make(chan struct{})
			close(done)
			o.NodeDone, o.NodeErr = done, func() error { return errors.New("too many open files") }
			o.Config.Logger = slog.New(slog.NewTextHandler(&log, nil))
			o.Listening = func(net.Addr) { go func() { time.Sleep(100 * time.Millisecond); cancel() }() }
		}, true, "", func(error) bool { return strings.Contains(log.String(), "demo node stopped: serving its last state") }},
		{"the engine fails", func(o *NodeOptions, cancel func()) { o.Engine.Roots = nil }, true, "engine: ", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cfg Config
			listened, stopping := false, false
			o := NodeOptions{Engine: eopts, Listen: "127.0.0.1:0",
				Config:     Config{AuthorizedKeys: keysPath, HostKey: filepath.Join(dir, "host_key")},
				Configured: func(c Config) { cfg = c },
				Listening: func(net.Addr) {
					listened = true
					if tt.err == "" {
						cancel()
					}
				},
				Stopping: func() { stopping = true }}
			if tt.tweak != nil {
				tt.tweak(&o, cancel)
			}
			err := ServeNode(ctx, o)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("ServeNode = %v, want %q", err, tt.err)
			}
			if tt.check != nil && !tt.check(err) {
				t.Fatalf("ServeNode = %T %v", err, err)
			}
			if stopping != tt.served || listened && !tt.served {
				t.Fatalf("listened %v, stopping %v, want served %v", listened, stopping, tt.served)
			}
			if cfg.Subscribe != nil && (!cfg.StartOnSecond || !cfg.UI.ClockOnSecond || cfg.UI.Desk != nil ||
				(cfg.History != nil) != (o.Config.UI.History != "") || (cfg.SnapshotAt != nil) != (o.Config.UI.History != "")) {
				t.Fatalf("configured %+v", cfg)
			}
		})
	}
}
