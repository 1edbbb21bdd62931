package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/enginetest"
)

// runWithDefault runs fgtop ARGS for a while without FGTOP_HISTORY, its
// default history directory and TMPDIR under base, then stops it with
// SIGTERM; it returns whether a history segment appeared under TMPDIR
// while it ran, and its stderr.
func runWithDefault(t *testing.T, base string, args ...string) (inTmp bool, stderr string) {
	t.Helper()
	tmp := filepath.Join(base, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestDemoHelperProcess$", "--"}, args...)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "FGTOP_HISTORY=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "FGTOP_DEMO_HELPER=1", "TMPDIR="+tmp, "FGTOP_TEST_DEFAULT_HISTORY="+filepath.Join(base, "default"))
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) && !inTmp {
		time.Sleep(100 * time.Millisecond)
		segs, _ := filepath.Glob(filepath.Join(tmp, "*", "history", "*"))
		inTmp = len(segs) > 0
	}
	time.Sleep(1500 * time.Millisecond) // a write or two more
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	return inTmp, errb.String()
}

// Issue 28: serve --demo and exporter --demo record the synthetic node
// beside it, in the demo's temporary directory, never into the default
// history directory (nor take its lock), even with FGTOP_HISTORY unset.
// The same run on a real source records into the default: the check can
// fail.
func TestDemoNeverTouchesTheDefaultHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fgtop for a few seconds per command")
	}
	keysDir := t.TempDir()
	keys := filepath.Join(keysDir, "authorized_keys")
	if err := os.WriteFile(keys, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "--demo", "--authorized-keys", keys, "--host-key", filepath.Join(keysDir, "hk"), "--listen", "127.0.0.1:0"},
		{"exporter", "--demo", "--listen", "127.0.0.1:0"},
	} {
		base := t.TempDir()
		inTmp, stderr := runWithDefault(t, base, args...)
		if _, err := os.Stat(filepath.Join(base, "default")); err == nil {
			t.Errorf("%s: the default history directory was made\n%s", strings.Join(args, " "), stderr)
		}
		if !inTmp {
			t.Errorf("%s: nothing recorded beside the demo node\n%s", strings.Join(args, " "), stderr)
		}
	}

	// The control: the exporter on a real source records into the
	// default.
	fx := enginetest.Fixtures(t)
	base := t.TempDir()
	_, stderr := runWithDefault(t, base, "exporter", "--listen", "127.0.0.1:0", "--scratch-root", "i-rec="+t.TempDir(),
		"--devices", filepath.Join(fx, "mock-accelerator.toml"), "--mock-etcd", filepath.Join(fx, "mock-accelerator.etcd.json"))
	if segs, _ := filepath.Glob(filepath.Join(base, "default", "*")); len(segs) == 0 {
		t.Errorf("the exporter on a real source did not record into the default directory: the knob does not work\n%s", stderr)
	}
}

// The demo console's record: beside the node unless --history says
// otherwise; FGTOP_HISTORY is the real node's and is not followed.
func TestDemoHistoryDir(t *testing.T) {
	t.Setenv("FGTOP_HISTORY", t.TempDir())
	node := &demo.Node{Dir: "/tmp/fgtop-demo-1"}
	for _, c := range []struct{ flag, want string }{
		{"", "/tmp/fgtop-demo-1/history"},
		{"off", ""},
		{"/srv/demo-history", "/srv/demo-history"},
	} {
		if got := demoHistoryDir(c.flag, node); got != c.want {
			t.Errorf("--history %q: %q, want %q", c.flag, got, c.want)
		}
	}
}

// The --history help of the commands that show the demo says where the
// demo records: the default directory it names otherwise is never the
// demo's (acceptance of issue 28 item 3: `fgtop demo --help` said
// "default /var/lib/fgtop/history").
func TestDemoHistoryFlagHelp(t *testing.T) {
	for _, c := range []struct {
		cmd     *cobra.Command
		want    string
		wantDef bool // the real node's default is still named
	}{
		{newDemoCmd(), "beside the demo node", false},
		{newServeCmd(), "with --demo: beside the demo node", true},
		{newExporterCmd(), "with --demo: beside the demo node", true},
	} {
		f := c.cmd.Flags().Lookup("history")
		if f == nil {
			t.Fatalf("%s: no --history", c.cmd.Name())
		}
		if !strings.Contains(f.Usage, c.want) {
			t.Errorf("%s --history: %q, want it to say %q", c.cmd.Name(), f.Usage, c.want)
		}
		if got := strings.Contains(f.Usage, defaultHistoryDir); got != c.wantDef {
			t.Errorf("%s --history: %q names %s: %v, want %v", c.cmd.Name(), f.Usage, defaultHistoryDir, got, c.wantDef)
		}
	}
}

// TestHistoryFlagHelpNamesEnv: every --history that falls back on
// FGTOP_HISTORY says so in its help before the default directory (the help
// named only /var/lib/fgtop/history, while docs/history.md and the manual
// put FGTOP_HISTORY first); the demo's, which never follows it, does not.
func TestHistoryFlagHelpNamesEnv(t *testing.T) {
	for _, c := range []struct {
		cmd  *cobra.Command
		want bool
	}{
		{newRootCmd(), true},
		{newWatchCmd(), true},
		{newSnapshotCmd(), true},
		{newHistoryCmd(), true},
		{newPlanCmd(), true},
		{newApplyCmd(), true},
		{newServeCmd(), true},
		{newExporterCmd(), true},
		{newDemoCmd(), false},
	} {
		f := c.cmd.Flags().Lookup("history")
		if f == nil {
			t.Fatalf("%s: no --history", c.cmd.Name())
		}
		if got := strings.Contains(f.Usage, "$FGTOP_HISTORY, else "+defaultHistoryDir); got != c.want {
			t.Errorf("%s --history: %q names FGTOP_HISTORY before %s: %v, want %v", c.cmd.Name(), f.Usage, defaultHistoryDir, got, c.want)
		}
	}
}
