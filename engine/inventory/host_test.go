package inventory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// hostLayout describes a fake /sys and /proc.
type hostLayout struct {
	online  string         // devices/system/cpu/online; "-" = missing
	nodes   map[int]string // node -> cpulist; nil = no devices/system/node
	memKB   int64          // 0 = no meminfo
	meminfo string         // overrides memKB when set
}

type fakeHostEnv struct {
	sys, proc string
	aff       []int
	affErr    error
	now       time.Time
}

func (l hostLayout) write(t *testing.T) *fakeHostEnv {
	t.Helper()
	dir := t.TempDir()
	env := &fakeHostEnv{sys: filepath.Join(dir, "sys"), proc: filepath.Join(dir, "proc"), now: time.Unix(1000, 0)}
	if err := os.MkdirAll(filepath.Join(env.sys, "devices/system/cpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(env.proc, 0o755); err != nil {
		t.Fatal(err)
	}
	if l.online != "-" {
		writeFile(t, env.sys, "devices/system/cpu/online", l.online+"\n")
	}
	if l.nodes != nil {
		if err := os.MkdirAll(filepath.Join(env.sys, "devices/system/node"), 0o755); err != nil {
			t.Fatal(err)
		}
		// Files the kernel keeps next to the node dirs.
		writeFile(t, env.sys, "devices/system/node/possible", "0-1\n")
		for n, list := range l.nodes {
			writeFile(t, env.sys, fmt.Sprintf("devices/system/node/node%d/cpulist", n), list+"\n")
		}
	}
	switch {
	case l.meminfo != "":
		writeFile(t, env.proc, "meminfo", l.meminfo)
	case l.memKB > 0:
		writeFile(t, env.proc, "meminfo", fmt.Sprintf("MemTotal:       %d kB\nMemFree:         1234 kB\n", l.memKB))
	}
	return env
}

func (e *fakeHostEnv) host(refresh time.Duration) *Host {
	return NewHost(HostOptions{
		SysRoot:  e.sys,
		ProcRoot: e.proc,
		Refresh:  refresh,
		Affinity: func() ([]int, error) { return e.aff, e.affErr },
		now:      func() time.Time { return e.now },
	})
}

// fakeHost is a Host over a fake layout with no affinity restriction.
func fakeHost(t *testing.T, l hostLayout) *Host {
	return l.write(t).host(0)
}

// cpus renders the cpu devices as "id@numa".
func cpus(info *HostInfo) string {
	var out []string
	for _, d := range info.Devices {
		if d.Name == "cpu" {
			out = append(out, fmt.Sprintf("%s@%d", d.ID, d.NUMANode))
		}
	}
	return strings.Join(out, " ")
}

func TestHost(t *testing.T) {
	tests := []struct {
		name     string
		layout   hostLayout
		aff      []int
		affErr   error
		want     string
		memBytes int64
		issues   []string // substrings, in order
	}{
		{
			name:   "two NUMA nodes",
			layout: hostLayout{online: "0-7", nodes: map[int]string{0: "0-3", 1: "4-7"}, memKB: 16 << 20},
			want:   "0@0 1@0 2@0 3@0 4@1 5@1 6@1 7@1", memBytes: 16 << 30,
		},
		{
			name:   "offline cpus",
			layout: hostLayout{online: "0-2,5", nodes: map[int]string{0: "0-2", 1: "5"}, memKB: 1},
			want:   "0@0 1@0 2@0 5@1", memBytes: 1024,
		},
		{
			name:   "affinity mask",
			layout: hostLayout{online: "0-7", nodes: map[int]string{0: "0-3", 1: "4-7"}, memKB: 1},
			aff:    []int{6, 1, 3, 9},
			want:   "1@0 3@0 6@1", memBytes: 1024,
		},
		{
			name:   "no NUMA in the kernel: node 0 as libnuma-less Backend.AI",
			layout: hostLayout{online: "0-3", memKB: 1},
			want:   "0@0 1@0 2@0 3@0", memBytes: 1024,
		},
		{
			name:   "a node dir missing: its cpus unknown",
			layout: hostLayout{online: "0-3", nodes: map[int]string{0: "0-1"}, memKB: 1},
			want:   "0@0 1@0 2@-1 3@-1", memBytes: 1024,
		},
		{
			name:   "memory-only node",
			layout: hostLayout{online: "0-1", nodes: map[int]string{0: "0-1", 1: ""}, memKB: 1},
			want:   "0@0 1@0", memBytes: 1024,
		},
		{
			name:   "bad cpulist",
			layout: hostLayout{online: "0-1", nodes: map[int]string{0: "0-1", 1: "x"}, memKB: 1},
			want:   "0@0 1@0", memBytes: 1024,
			issues: []string{"cannot read NUMA node 1's CPUs"},
		},
		{
			name:   "affinity error",
			layout: hostLayout{online: "0-1", nodes: map[int]string{0: "0-1"}, memKB: 1},
			affErr: errors.New("EPERM"),
			want:   "0@0 1@0", memBytes: 1024,
			issues: []string{"cannot read the CPU affinity mask (EPERM)"},
		},
		{
			name:   "no meminfo",
			layout: hostLayout{online: "0", nodes: map[int]string{0: "0"}},
			want:   "0@0",
			issues: []string{"host memory unknown"},
		},
		{
			name:   "meminfo without MemTotal",
			layout: hostLayout{online: "0", nodes: map[int]string{0: "0"}, meminfo: "MemFree: 1 kB\n"},
			want:   "0@0",
			issues: []string{"no MemTotal line"},
		},
		{
			name:   "no cpu in mask",
			layout: hostLayout{online: "0-1", memKB: 1},
			aff:    []int{5},
			want:   "", memBytes: 1024,
			issues: []string{"no CPU core is both online"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.layout.write(t)
			env.aff, env.affErr = tc.aff, tc.affErr
			info := env.host(0).Read()
			if got := cpus(info); got != tc.want {
				t.Errorf("cpus = %q, want %q", got, tc.want)
			}
			if info.MemBytes != tc.memBytes {
				t.Errorf("MemBytes = %d, want %d", info.MemBytes, tc.memBytes)
			}
			var mem *model.Device
			for i := range info.Devices {
				d := &info.Devices[i]
				switch d.Name {
				case "cpu":
					if d.Slot != "cpu" || d.SlotType != "count" || d.Capacity.String() != "1" || fmt.Sprint(d.Index) != string(d.ID) {
						t.Errorf("cpu device = %+v", d)
					}
				case "mem":
					mem = d
				}
			}
			if tc.memBytes > 0 {
				if mem == nil || mem.ID != "root" || mem.Slot != "mem" || mem.SlotType != "bytes" || mem.Capacity.String() != fmt.Sprint(tc.memBytes) || &info.Devices[len(info.Devices)-1] != mem {
					t.Errorf("mem device = %+v", mem)
				}
			} else if mem != nil {
				t.Errorf("mem device without MemTotal: %+v", mem)
			}
			if len(info.Issues) != len(tc.issues) {
				t.Fatalf("issues = %v, want %d", info.Issues, len(tc.issues))
			}
			for i, want := range tc.issues {
				if !strings.Contains(info.Issues[i].Message, want) {
					t.Errorf("issue %d = %q, want %q", i, info.Issues[i].Message, want)
				}
			}
		})
	}
}

func TestHostNoOnlineFile(t *testing.T) {
	env := hostLayout{online: "-", memKB: 1}.write(t)
	info := env.host(0).Read()
	if n := len(info.Devices) - 1; n < 1 || len(info.Issues) != 1 || !strings.Contains(info.Issues[0].Message, "cannot read the online CPUs") {
		t.Errorf("%d cpus, issues %v", n, info.Issues)
	}
}

func TestHostCaching(t *testing.T) {
	env := hostLayout{online: "0-3", nodes: map[int]string{0: "0-3"}, memKB: 1}.write(t)
	h := env.host(time.Minute)
	first := h.Read()
	if h.Read() != first {
		t.Fatal("unchanged host: new HostInfo")
	}
	// Topology changes are seen only after Refresh.
	writeFile(t, env.sys, "devices/system/cpu/online", "0-1\n")
	env.now = env.now.Add(30 * time.Second)
	if h.Read() != first {
		t.Fatal("re-read /sys before Refresh")
	}
	env.now = env.now.Add(31 * time.Second)
	second := h.Read()
	if second == first || cpus(second) != "0@0 1@0" {
		t.Fatalf("after Refresh: %q", cpus(second))
	}
	// A re-read that finds nothing new keeps the same HostInfo.
	env.now = env.now.Add(time.Hour)
	if h.Read() != second {
		t.Fatal("identical re-read: new HostInfo")
	}
	// The affinity mask is checked on every Read.
	env.aff = []int{1}
	if third := h.Read(); third == second || cpus(third) != "1@0" {
		t.Fatalf("after affinity change: %q", cpus(third))
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"", []int{}, false},
		{"\n", []int{}, false},
		{"0", []int{0}, false},
		{"0-3,8,10-11\n", []int{0, 1, 2, 3, 8, 10, 11}, false},
		{"3,1-2,2", []int{1, 2, 3}, false},
		{"a", nil, true},
		{"3-1", nil, true},
		{"1-", nil, true},
		{"-1", nil, true},
		{"0-99999999", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseCPUList(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestHostReal(t *testing.T) {
	info := NewHost(HostOptions{}).Read()
	n := 0
	for _, d := range info.Devices {
		if d.Name == "cpu" {
			n++
		}
	}
	if n == 0 || info.MemBytes <= 0 {
		t.Errorf("real host: %d cpus, %d bytes, issues %v", n, info.MemBytes, info.Issues)
	}
	aff, err := schedAffinity()
	if err != nil || (aff != nil && len(aff) < n) {
		t.Errorf("schedAffinity = %v, %v", aff, err)
	}
}

// TestHostOverride: --host-cpus and --host-mem replace what /sys, /proc and
// the affinity mask say, so a config for another node can be judged here.
func TestHostOverride(t *testing.T) {
	env := hostLayout{online: "0-1", nodes: map[int]string{0: "0", 1: "1"}, memKB: 4 << 20}.write(t)
	env.aff = []int{0}
	h := NewHost(HostOptions{SysRoot: env.sys, ProcRoot: env.proc, CPUs: []int{5, 0, 1, 2, 3, 4, 5}, MemBytes: 512 << 30,
		Affinity: func() ([]int, error) { t.Error("the affinity mask was read despite the override"); return nil, nil }})
	info := h.Read()
	if got := cpus(info); got != "0@0 1@0 2@0 3@0 4@0 5@0" {
		t.Errorf("cores %s", got)
	}
	if info.MemBytes != 512<<30 || info.Devices[len(info.Devices)-1].Capacity.String() != fmt.Sprint(int64(512<<30)) {
		t.Errorf("memory %d %v", info.MemBytes, info.Devices[len(info.Devices)-1])
	}
	// Memory alone: the real cores (online ∩ affinity) stay.
	h = NewHost(HostOptions{SysRoot: env.sys, ProcRoot: env.proc, MemBytes: 1 << 30, Affinity: func() ([]int, error) { return []int{1}, nil }})
	info = h.Read()
	if got := cpus(info); got != "1@1" || info.MemBytes != 1<<30 {
		t.Errorf("cores %s, memory %d", got, info.MemBytes)
	}
}
