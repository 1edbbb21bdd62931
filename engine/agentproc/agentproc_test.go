package agentproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// fakeProc builds a /proc tree: stat with btime, and one directory per
// process with cmdline, stat and a cwd link.
type fakeProc struct {
	t    *testing.T
	root string
	boot time.Time
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, root: t.TempDir(), boot: time.Unix(1_700_000_000, 0)}
	f.write("stat", fmt.Sprintf("cpu  1 2 3 4\nintr 5\nbtime %d\nprocesses 9\n", f.boot.Unix()))
	return f
}

func (f *fakeProc) write(rel, content string) {
	f.t.Helper()
	testfix.WriteFile(f.t, f.root, rel, content)
}

// proc adds a process started `after` boot, running args in cwd.
func (f *fakeProc) proc(pid int, after time.Duration, cwd string, args ...string) {
	f.t.Helper()
	dir := fmt.Sprint(pid)
	f.write(dir+"/cmdline", strings.Join(args, "\x00")+"\x00")
	ticks := int64(after / (time.Second / clockTicks))
	// The command name may hold spaces and parentheses.
	f.write(dir+"/stat", fmt.Sprintf("%d (python3 (x) y) S 1 %d %d 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 100 10 18446744073709551615", pid, pid, pid, ticks))
	if cwd != "" {
		if err := os.Symlink(cwd, filepath.Join(f.root, dir, "cwd")); err != nil {
			f.t.Fatal(err)
		}
	}
}

func TestStatus(t *testing.T) {
	etc := filepath.Join(t.TempDir(), "backend.ai")
	if err := os.Mkdir(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(etc, "agent.toml")
	if err := os.WriteFile(config, []byte("[agent]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(etc, "other.toml")
	os.WriteFile(other, []byte("[agent]\n"), 0o644)

	cases := []struct {
		name   string
		setup  func(f *fakeProc)
		change time.Duration // after boot
		want   model.RestartState
		pids   []int
		detail string
	}{
		{"started before the change", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(400, time.Hour, "/", "/usr/bin/python3", "-m", "ai.backend.agent.server", "-f", config)
		}, 2 * time.Hour, model.RestartPending, []int{400}, "restart it"},
		{"started after the change", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(400, 3*time.Hour, "/", "python", "-m", "ai.backend.agent.server", "--config="+config)
		}, 2 * time.Hour, model.RestartCurrent, []int{400}, "after agent.toml"},
		{"relative -f from its cwd", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(401, time.Hour, etc, "./backend.ai", "ag", "start-server", "-f", "agent.toml")
		}, 2 * time.Hour, model.RestartPending, []int{401}, ""},
		{"no -f: found by the agent's search in its cwd", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(402, time.Hour, etc, "python", "-m", "ai.backend.agent.server")
		}, 2 * time.Hour, model.RestartPending, []int{402}, ""},
		{"another config is not ours", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(403, time.Hour, "/", "python", "-m", "ai.backend.agent.server", "-f", other)
			f.proc(404, time.Hour, "/", "vim", config) // an editor on the file is no agent
		}, 2 * time.Hour, model.RestartNotRunning, nil, ""},
		{"a wrapper naming the file", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(407, 3*time.Hour, "/", "/opt/backend.ai/bin/run-agent", config)
		}, 2 * time.Hour, model.RestartCurrent, []int{407}, ""},
		{"no agent at all", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(405, time.Hour, "/", "bash")
		}, 2 * time.Hour, model.RestartNotRunning, nil, "no Backend.AI agent process"},
		{"others hidden (hidepid)", func(f *fakeProc) {
			f.proc(405, time.Hour, "/", "bash")
		}, 2 * time.Hour, model.RestartUnknown, nil, "hidden"},
		{"agent whose cwd cannot be read", func(f *fakeProc) {
			f.proc(1, 0, "/")
			f.proc(406, time.Hour, "", "python", "-m", "ai.backend.agent.server", "-f", "agent.toml")
		}, 2 * time.Hour, model.RestartUnknown, nil, "could not be inspected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProc(t)
			c.setup(f)
			fd := &Finder{ProcRoot: f.root}
			got := fd.Status(config, f.boot.Add(c.change))
			if got.State != c.want || fmt.Sprint(got.PIDs) != fmt.Sprint(c.pids) || !strings.Contains(got.Detail, c.detail) {
				t.Fatalf("got %+v, want %s %v (%q)", got, c.want, c.pids, c.detail)
			}
		})
	}
}

func TestStatusNoProc(t *testing.T) {
	got := (&Finder{ProcRoot: filepath.Join(t.TempDir(), "nope")}).Status("/etc/agent.toml", time.Now())
	if got.State != model.RestartUnknown || !strings.Contains(got.Detail, "cannot tell") {
		t.Fatalf("got %+v", got)
	}
}

// TestStartTimeOfThisProcess reads the real /proc: this test's own process
// started before now and after boot.
func TestStartTimeOfThisProcess(t *testing.T) {
	boot, err := bootTime("/proc")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	start, err := startTime(fmt.Sprintf("/proc/%d", os.Getpid()), boot)
	if err != nil {
		t.Fatal(err)
	}
	if start.Before(boot) || start.After(time.Now().Add(time.Second)) {
		t.Fatalf("start %v, boot %v, now %v", start, boot, time.Now())
	}
}

// Two agent processes started at different times, both before the file
// changed: where the journal clears the older one but not the younger (an
// apply in its first minute, say), the restart pending names the younger,
// the one to restart, not the one that runs the file as it is.
func TestStatusNamesTheProcessNotProved(t *testing.T) {
	config := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(config, []byte("[agent]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFakeProc(t)
	f.proc(1, 0, "/")
	f.proc(400, time.Hour, "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	f.proc(401, 90*time.Minute, "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	proved := f.boot.Add(75 * time.Minute)
	fd := &Finder{ProcRoot: f.root, RanAtStart: func(start time.Time) (string, bool) {
		return "proved", start.Before(proved)
	}}
	got := fd.Status(config, f.boot.Add(2*time.Hour))
	if got.State != model.RestartPending || !strings.Contains(got.Detail, "agent process 401 ") || strings.Contains(got.Detail, "process 400") {
		t.Fatalf("got %+v, want restart pending naming process 401", got)
	}
}

// Two agent processes both cleared by the journal: the detail names both,
// not the older alone.
func TestStatusNamesEveryProcessCleared(t *testing.T) {
	config := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(config, []byte("[agent]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFakeProc(t)
	f.proc(1, 0, "/")
	f.proc(400, time.Hour, "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	f.proc(401, 90*time.Minute, "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	f.proc(402, 3*time.Hour, "/", "python", "-m", "ai.backend.agent.server", "-f", config)
	fd := &Finder{ProcRoot: f.root, RanAtStart: func(time.Time) (string, bool) { return "proved", true }}
	got := fd.Status(config, f.boot.Add(2*time.Hour))
	if got.State != model.RestartCurrent || !strings.Contains(got.Detail, "agent process 400 ") || !strings.Contains(got.Detail, "so does agent process 401") || strings.Contains(got.Detail, "402") {
		t.Fatalf("got %+v, want current naming 400 and 401 (402 started after the change)", got)
	}
}
