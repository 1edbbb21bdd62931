package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestListenWantsAPort: serve's and the exporter's --listen (and
// --metrics-listen) refuse an empty port, which made serve listen on a
// port the kernel picked, and a port past 65535, which was refused in
// Go's words ("address 99999: invalid port"), as bad usage naming the
// flag, before anything starts.
func TestListenWantsAPort(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	serve := []string{"serve", "--demo", "--history", "off", "--authorized-keys", keys, "--host-key", filepath.Join(dir, "hk")}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"serve no port", append(serve, "--listen", "127.0.0.1:"), `serve: --listen "127.0.0.1:": the port is missing (e.g. 127.0.0.1:2222)`},
		{"serve port too big", append(serve, "--listen", "127.0.0.1:99999"), `serve: --listen "127.0.0.1:99999": port 99999 is out of range`},
		{"serve metrics port too big", append(serve, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:70000"), `serve: --metrics-listen "127.0.0.1:70000": port 70000 is out of range`},
		{"exporter port too big", []string{"exporter", "--demo", "--listen", "127.0.0.1:65536"}, `--listen "127.0.0.1:65536": port 65536 is out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			// Bounded: a --listen taken as it is starts the server, which
			// then runs until the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			root := newRootCmd()
			var out bytes.Buffer
			root.SetArgs(tt.args)
			root.SetOut(&out)
			root.SetErr(&out)
			err := root.ExecuteContext(ctx)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitBadUsage {
				t.Fatalf("err %v, want bad usage (exit %d); output:\n%s", err, exitBadUsage, out.String())
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %q, want %q", err, tt.want)
			}
		})
	}
}
