package sshserve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/metrics"
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
	var log bytes.Buffer
	var metricsAt string
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
		{"metrics it cannot listen for", func(o *NodeOptions, cancel func()) {
			o.MetricsListen, o.MetricsName = "127.0.0.1:99999", "--metrics-listen"
		}, false, "127.0.0.1:99999", func(err error) bool { var le *metrics.ListenError; return errors.As(err, &le) }},
		{"metrics beside", func(o *NodeOptions, cancel func()) {
			o.MetricsListen, o.MetricsName = "127.0.0.1:0", "--metrics-listen"
			o.MetricsListening = func(addr string) { metricsAt = addr }
		}, true, "", func(error) bool { return metricsAt != "" }},
		{"a log", func(o *NodeOptions, cancel func()) { o.Log = &log }, true, "", nil},
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
				Stopping: func(*slog.Logger) { stopping = true }}
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

func TestWaitNode(t *testing.T) {
	stopped, failed := errors.New("stopped"), errors.New("too many open files")
	for _, tt := range []struct {
		name    string
		nodeErr error
		engine  error
		serve   error
		metrics error
		want    string
		logged  bool
	}{
		{"the demo node ends", nil, nil, nil, nil, "", false},
		{"the demo node fails: its last state is served on", failed, nil, nil, nil, "", true},
		{"the engine stops", nil, context.Canceled, nil, nil, "", false},
		{"the engine fails", nil, stopped, nil, nil, "engine: stopped", false},
		{"the server fails", nil, nil, stopped, nil, "stopped", false},
		{"the metrics fail", nil, nil, nil, stopped, "stopped", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			if tt.engine == nil && tt.serve == nil && tt.metrics == nil {
				close(done)
			}
			var log bytes.Buffer
			chanOf := func(e error) chan error {
				c := make(chan error, 1)
				if e != nil {
					c <- e
				}
				return c
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.nodeErr != nil && tt.engine == nil && tt.serve == nil && tt.metrics == nil {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			err := waitNode(ctx, done, func() error { return tt.nodeErr }, slog.New(slog.NewTextHandler(&log, nil)),
				chanOf(tt.engine), chanOf(tt.serve), chanOf(tt.metrics))
			if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && got != tt.want {
				t.Fatalf("waitNode = %v, want %q", err, tt.want)
			}
			if got := strings.Contains(log.String(), "demo node stopped: serving its last state"); got != tt.logged {
				t.Fatalf("logged %q, want the demo node's end logged: %v", log.String(), tt.logged)
			}
		})
	}
}
