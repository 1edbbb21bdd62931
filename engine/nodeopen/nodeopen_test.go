package nodeopen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/demo"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// mockFile is a mock-accelerator.toml the inventory's tests use.
var mockFile = filepath.Join("..", "inventory", "testdata", "mock-accelerator.toml")

// wantErr checks err against want: "" for none, else a part of its words;
// input says it must be an *InputError.
func wantErr(t *testing.T, err error, want string, input bool) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one saying %q", err, want)
	}
	var ie *InputError
	if input && !errors.As(err, &ie) {
		t.Fatalf("err = %T %v, want an *InputError", err, err)
	}
}

func TestParseRoots(t *testing.T) {
	abs, _ := filepath.Abs("x/agent-1")
	for _, tt := range []struct {
		name  string
		vals  []string
		agent model.AgentID
		err   string
	}{
		{"bare dir names its agent", []string{"x/agent-1"}, "agent-1", ""},
		{"agent=dir", []string{"a0=x/agent-1"}, "a0", ""},
		{"empty agent", []string{"=x"}, "", "want DIR or AGENT=DIR"},
		{"empty dir", []string{"a0="}, "", "want DIR or AGENT=DIR"},
		{"twice", []string{"x/agent-1", "b=x/agent-1/"}, "", "given twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			roots, err := ParseRoots(tt.vals)
			wantErr(t, err, tt.err, true)
			if tt.err == "" && (len(roots) != 1 || roots[0].Agent != tt.agent || roots[0].Path != abs) {
				t.Fatalf("roots = %+v, want %s at %s", roots, tt.agent, abs)
			}
		})
	}
}

func TestCheckRootAgents(t *testing.T) {
	agents := []model.Agent{{ID: "a0"}, {ID: "a1"}}
	for _, tt := range []struct {
		val, err string
	}{
		{"a0=/x", ""},
		{"/x/zz", ""},
		{"a9=/x", `--scratch-root a9=/x: unknown agent "a9"; the config's agents are: a0, a1 (agent.toml)`},
	} {
		roots, err := ParseRoots([]string{tt.val})
		if err != nil {
			t.Fatal(err)
		}
		wantErr(t, CheckRootAgents([]string{tt.val}, roots, agents, "agent.toml"), tt.err, true)
	}
}

func TestRefuseBlindAndWarnRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tt := range []struct {
		name          string
		roots         []scratch.Root
		named         bool
		refused       bool
		blind, absent int
		warned        bool
	}{
		{"a directory", []scratch.Root{{Path: dir, Agent: "a"}}, true, false, 0, 0, false},
		{"a named root that is missing", []scratch.Root{{Path: missing, Agent: "a"}}, true, true, 1, 0, true},
		{"a config root that is missing", []scratch.Root{{Path: missing, Agent: "a"}}, false, false, 0, 1, true},
		{"a file", []scratch.Root{{Path: file, Agent: "a"}}, false, true, 1, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := RefuseBlind(tt.roots, tt.named)
			if (err != nil) != tt.refused {
				t.Fatalf("RefuseBlind = %v, refused want %v", err, tt.refused)
			}
			if err != nil {
				wantErr(t, err, "a one-shot report would leave out the kernels under it", true)
			}
			var w bytes.Buffer
			u := WarnRoots(lineOn(&w), &engine.Options{Roots: tt.roots, RootsOverridden: tt.named})
			if len(u.Blind) != tt.blind || len(u.Absent) != tt.absent {
				t.Fatalf("WarnRoots = %+v, want %d blind, %d absent", u, tt.blind, tt.absent)
			}
			if got := strings.HasPrefix(w.String(), "warning: "); got != tt.warned {
				t.Fatalf("warned %q, want a warning: %v", w.String(), tt.warned)
			}
			WarnRoots(nil, &engine.Options{Roots: tt.roots, RootsOverridden: tt.named})
		})
	}
}

func TestParseHost(t *testing.T) {
	for _, tt := range []struct {
		cpus, mem string
		ncpu      int
		bytes     int64
		err       string
	}{
		{"", "", 0, 0, ""},
		{"0-3,8", "1k", 5, 1024, ""},
		{"x", "", 0, 0, `--host-cpus "x": `},
		{"", "lots", 0, 0, `--host-mem "lots": `},
		{"", "0", 0, 0, `--host-mem "0": want a positive size such as 512g`},
	} {
		h, err := ParseHost(tt.cpus, tt.mem)
		wantErr(t, err, tt.err, true)
		if tt.err == "" && (len(h.CPUs) != tt.ncpu || h.MemBytes != tt.bytes) {
			t.Errorf("ParseHost(%q, %q) = %+v", tt.cpus, tt.mem, h)
		}
	}
}

func TestCheckMockEtcd(t *testing.T) {
	for _, tt := range []struct {
		devices, mockEtcd, err string
	}{
		{"auto", "", ""},
		{"mock.toml", "etcd.json", ""},
		{"nvml", "etcd.json", "--mock-etcd etcd.json: the mock plugin's settings apply only with --devices PATH-to-mock-accelerator.toml, not --devices nvml"},
		{"", "etcd.json", "not --devices "},
	} {
		wantErr(t, CheckMockEtcd(tt.devices, tt.mockEtcd), tt.err, true)
	}
}

func TestParsePlugin(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "plugin.json")
	if err := os.WriteFile(good, []byte(`{"cuda": {"allocation_mode": "fractional"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		p       PluginSettings
		devices string
		err     string
	}{
		{"none", PluginSettings{}, "mock.toml", ""},
		{"open on nvml", PluginSettings{CUDAPlugin: model.PluginCUDAOpen}, "auto", ""},
		{"unknown kind", PluginSettings{CUDAPlugin: "cuda9"}, "auto", "--cuda-plugin "},
		{"bad capacity", PluginSettings{FGPUCapacity: "GPU-x=abc"}, "nvml", "--fgpu-capacity "},
		{"missing file", PluginSettings{Config: filepath.Join(dir, "none.json")}, "nvml", "--plugin-config " + filepath.Join(dir, "none.json") + ": no such file (looked for "},
		{"a file", PluginSettings{Config: good}, "", ""},
		{"on a mock", PluginSettings{Config: good}, "mock.toml", "--plugin-config applies to NVML's GPUs (--devices auto or nvml), not to --devices mock.toml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePlugin(tt.p, tt.devices)
			wantErr(t, err, tt.err, true)
			if err == nil && (p.Kind != tt.p.CUDAPlugin || (p.File != nil) != (tt.p.Config != "") || p.FilePath != tt.p.Config) {
				t.Fatalf("ParsePlugin = %+v", p)
			}
		})
	}
}

func TestIdleAfter(t *testing.T) {
	for _, tt := range []struct {
		in, want time.Duration
		err      string
	}{
		{0, -1, ""},
		{time.Minute, time.Minute, ""},
		{-time.Second, 0, "--idle-after -1s: want a duration of 0 (never) or more, such as 10m"},
	} {
		got, err := IdleAfter(tt.in)
		wantErr(t, err, tt.err, true)
		if got != tt.want {
			t.Errorf("IdleAfter(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestConfigPluginsOfNamesEachAgentOnce(t *testing.T) {
	c := &agentconfig.Config{Agents: []agentconfig.AgentConfig{{ID: "a0", IDSet: true}, {InheritedID: "a1"}, {ID: "a0", IDSet: true}, {}},
		BlockComputePlugins: []string{"x"}}
	pc := ConfigPluginsOf(c)
	if len(pc.Agents) != 2 || pc.Agents[0] != "a0" || pc.Agents[1] != "a1" || pc.AllowSet || pc.Etcd == nil || len(pc.Block) != 1 {
		t.Fatalf("ConfigPluginsOf = %+v", pc)
	}
	if pc.hasEtcd() {
		t.Fatal("no [etcd] addresses, yet hasEtcd")
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "agent-x")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		s    Settings
		err  error
	}{
		{"a missing config", Settings{Config: filepath.Join(dir, "none.toml")}, &ConfigError{}},
		{"a missing device file", Settings{ScratchRoots: []string{root}, Devices: filepath.Join(dir, "none.toml")}, &DeviceError{}},
		{"a blind one-shot", Settings{ScratchRoots: []string{filepath.Join(dir, "gone")}, Devices: mockFile, OneShot: true}, &InputError{}},
		{"a bad idle-after", Settings{Live: true, IdleAfter: -1}, &InputError{}},
		{"a mock", Settings{ScratchRoots: []string{root}, Devices: mockFile, Live: true}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := Open(tt.s)
			if opts.Inventory != nil {
				defer opts.Inventory.Close()
			}
			switch want := tt.err.(type) {
			case nil:
				if err != nil || opts.Inventory == nil || len(opts.Roots) != 1 || opts.Roots[0].Agent != "agent-x" || !opts.RootsOverridden || opts.IdleAfter != -1 {
					t.Fatalf("Open = %+v, %v", opts, err)
				}
			case *ConfigError:
				if !errors.As(err, &want) || want.Found || !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("err = %v, want a *ConfigError of a missing file", err)
				}
			case *DeviceError:
				if !errors.As(err, &want) {
					t.Fatalf("err = %T %v, want a *DeviceError", err, err)
				}
			case *InputError:
				if !errors.As(err, &want) {
					t.Fatalf("err = %T %v, want an *InputError", err, err)
				}
			}
		})
	}
}

func TestOpenServedNamesTheNode(t *testing.T) {
	dir := t.TempDir()
	n, err := OpenServed(context.Background(), ServedOptions{Sources: Settings{ScratchRoots: []string{dir}, Devices: mockFile}, Name: "gpu-07"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Options.Inventory.Close()
	if n.Demo != nil || n.Options.Node != "gpu-07" {
		t.Fatalf("OpenServed = %+v", n)
	}
	if _, err := OpenServed(context.Background(), ServedOptions{Sources: Settings{ScratchRoots: []string{"=x"}}}); err == nil {
		t.Fatal("a bad --scratch-root opened")
	}
}

func TestOpenServedDemoIdleAfter(t *testing.T) {
	for _, tt := range []struct {
		name  string
		given bool
		idle  time.Duration
		want  time.Duration
		err   bool
	}{
		{"the demo's default", false, time.Hour, demo.DefaultIdleAfter, false},
		{"given", true, time.Hour, time.Hour, false},
		{"given as never", true, 0, -1, false},
		{"given wrong", true, -time.Second, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := OpenServed(context.Background(), ServedOptions{Demo: true, Seed: 1, IdleAfterGiven: tt.given,
				Sources: Settings{IdleAfter: tt.idle}, Name: "demo-a"})
			if tt.err {
				var ie *InputError
				if !errors.As(err, &ie) || n != nil {
					t.Fatalf("OpenServed = %v, %v; want an *InputError", n, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := n.Demo.Dir
			if n.Options.IdleAfter != tt.want || n.Options.Node != "demo-a" {
				t.Errorf("idle after %v on node %q, want %v on demo-a", n.Options.IdleAfter, n.Options.Node, tt.want)
			}
			if err := n.Close(nil); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the demo's files are left in %s (%v)", dir, err)
			}
		})
	}
}

// lineOn says each line on w.
func lineOn(w *bytes.Buffer) func(string) {
	return func(line string) { w.WriteString(line + "\n") }
}

// failingClose is a source whose Close fails.
type failingClose struct{ inventory.Source }

func (failingClose) Close() error { return errors.New("busy") }

func TestCloseSources(t *testing.T) {
	var w bytes.Buffer
	CloseSources(engine.Options{}, lineOn(&w))
	CloseSources(engine.Options{Inventory: failingClose{}}, nil)
	(&Served{Options: engine.Options{Inventory: failingClose{}}}).Close(lineOn(&w))
	if got, want := w.String(), "close device source: busy\n"; got != want {
		t.Fatalf("said %q, want %q", got, want)
	}
}
