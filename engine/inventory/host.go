package inventory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fgtop/fgtop/model"
)

// DefaultHostRefresh is how often a Host re-reads the CPU topology and
// MemTotal. Both change only on hotplug; the affinity mask, which a cpuset
// change can alter at any time, is checked on every read.
const DefaultHostRefresh = 30 * time.Second

// HostOptions configures a Host. The zero value reads the real machine.
type HostOptions struct {
	// SysRoot replaces "/sys" (tests point it at a temp dir).
	SysRoot string
	// ProcRoot replaces "/proc".
	ProcRoot string
	// Affinity returns the CPUs this process may run on. Nil uses
	// sched_getaffinity(2) on Linux and "every online CPU" elsewhere.
	Affinity func() ([]int, error)
	// Refresh is how often topology and MemTotal are re-read; zero means
	// DefaultHostRefresh, negative means on every Read.
	Refresh time.Duration
	// CPUs, when non-nil, replaces the host's usable cores (--host-cpus):
	// a config written for another node is then judged against that
	// node's cores. /sys and the affinity mask are not read; every core is
	// on NUMA node 0.
	CPUs []int
	// MemBytes, when positive, replaces MemTotal (--host-mem).
	MemBytes int64

	// now is the clock (tests).
	now func() time.Time
}

// HostInfo is one reading of the host: its CPU cores (each a device of
// plugin "cpu", slot "cpu", capacity 1) and its memory (one device "root" of
// plugin "mem", slot "mem", capacity MemTotal in bytes).
//
// A Host returns the same *HostInfo while nothing changed, so callers can
// compare pointers to skip work.
type HostInfo struct {
	Devices  []model.Device
	MemBytes int64
	Issues   []model.Issue
}

// Host reads the host's CPU cores and memory the way Backend.AI's intrinsic
// plugins see them (domain/backendai.md §7):
//
//   - cores: the CPUs in the process's affinity mask (sched_getaffinity)
//     that are online (/sys/devices/system/cpu/online), sorted; the agent
//     would first ask Docker for its cgroup cpuset, which fgtop does not.
//   - NUMA node of a core: the node whose /sys/devices/system/node/nodeN/cpulist
//     lists it. Without /sys/devices/system/node (a kernel without NUMA) every
//     core is on node 0, which is what Backend.AI's libnuma wrapper answers
//     when NUMA is unsupported; a core no node lists is -1 (unknown), as
//     libnuma's numa_node_of_cpu fails for it.
//   - memory: MemTotal from /proc/meminfo.
//
// A Host is safe for concurrent use.
type Host struct {
	opts HostOptions

	mu       sync.Mutex
	topo     *hostTopo
	topoAt   time.Time
	lastAff  []int
	affErr   string
	last     *HostInfo
	lastTopo *hostTopo
}

// hostTopo is what Host re-reads only every Refresh.
type hostTopo struct {
	online   []int       // sorted
	nodeOf   map[int]int // core -> NUMA node
	numaSys  bool        // /sys/devices/system/node exists
	memBytes int64
	issues   []model.Issue
}

// NewHost returns a Host reading the machine described by opts.
func NewHost(opts HostOptions) *Host {
	if opts.SysRoot == "" {
		opts.SysRoot = "/sys"
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.Refresh == 0 {
		opts.Refresh = DefaultHostRefresh
	}
	if opts.Affinity == nil {
		opts.Affinity = schedAffinity
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	return &Host{opts: opts}
}

// Read returns the host's devices now. It re-reads /sys and /proc only every
// Refresh; in between it costs one sched_getaffinity call.
func (h *Host) Read() *HostInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.opts.now()
	if h.topo == nil || h.opts.Refresh < 0 || now.Sub(h.topoAt) >= h.opts.Refresh {
		t := h.readTopo()
		if h.topo == nil || !t.equal(h.topo) {
			h.topo = t
		}
		h.topoAt = now
	}
	var aff []int
	var err error
	if h.opts.CPUs == nil {
		aff, err = h.opts.Affinity()
	}
	affErr := ""
	if err != nil {
		// Without the mask every online CPU counts, as the agent's own
		// fallback (the system CPU count) would.
		aff, affErr = nil, err.Error()
	}
	if h.last != nil && h.lastTopo == h.topo && affErr == h.affErr && slices.Equal(aff, h.lastAff) {
		return h.last
	}
	h.lastAff, h.affErr, h.lastTopo = aff, affErr, h.topo
	h.last = h.build(aff, affErr)
	return h.last
}

// build composes a HostInfo from the cached topology and an affinity mask
// (nil: every online CPU).
func (h *Host) build(aff []int, affErr string) *HostInfo {
	t := h.topo
	info := &HostInfo{MemBytes: t.memBytes}
	info.Issues = append(info.Issues, t.issues...)
	if affErr != "" {
		info.Issues = append(info.Issues, model.Issue{
			Severity: model.SevWarning, Code: model.IssueDeviceSource,
			Message: fmt.Sprintf("cannot read the CPU affinity mask (%s): counting every online CPU", affErr),
		})
	}
	cores := t.online
	if aff != nil {
		cores = intersectSorted(t.online, aff)
	}
	if len(cores) == 0 {
		info.Issues = append(info.Issues, model.Issue{
			Severity: model.SevWarning, Code: model.IssueDeviceSource,
			Message: "no CPU core is both online and in this process's affinity mask",
		})
	}
	info.Devices = make([]model.Device, 0, len(cores)+1)
	for _, c := range cores {
		node, ok := t.nodeOf[c]
		switch {
		case ok:
		case t.numaSys:
			node = -1
		default:
			node = 0
		}
		info.Devices = append(info.Devices, model.Device{
			ID:       model.DeviceID(strconv.Itoa(c)),
			Name:     "cpu",
			Slot:     model.SlotCPU,
			SlotType: model.SlotTypeCount,
			Capacity: model.One,
			Index:    c,
			NUMANode: node,
		})
	}
	if t.memBytes > 0 {
		info.Devices = append(info.Devices, model.Device{
			ID:       "root",
			Name:     "mem",
			Slot:     model.SlotMem,
			SlotType: model.SlotTypeBytes,
			Capacity: model.NewDec(t.memBytes, 0),
			NUMANode: -1,
		})
	}
	return info
}

// readTopo reads online CPUs, NUMA nodes and MemTotal. Problems become
// issues; it never fails as a whole.
func (h *Host) readTopo() *hostTopo {
	t := &hostTopo{nodeOf: map[int]int{}}
	sys := h.opts.SysRoot
	if h.opts.CPUs != nil {
		t.online = slices.Compact(slices.Sorted(slices.Values(h.opts.CPUs)))
		t.memBytes = h.opts.MemBytes
		if t.memBytes <= 0 {
			t.memBytes, _ = readMemTotal(filepath.Join(h.opts.ProcRoot, "meminfo"))
		}
		return t
	}

	onlinePath := filepath.Join(sys, "devices/system/cpu/online")
	online, err := readCPUList(onlinePath)
	if err != nil {
		n := runtime.NumCPU()
		t.issues = append(t.issues, model.Issue{
			Severity: model.SevWarning, Code: model.IssueDeviceSource, File: onlinePath,
			Message: fmt.Sprintf("cannot read the online CPUs (%v): assuming CPUs 0-%d", err, n-1),
		})
		online = make([]int, n)
		for i := range online {
			online[i] = i
		}
	}
	t.online = online

	nodeDir := filepath.Join(sys, "devices/system/node")
	entries, err := os.ReadDir(nodeDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No NUMA support in the kernel: node 0 for all (see Host).
	case err != nil:
		t.numaSys = true
		t.issues = append(t.issues, model.Issue{
			Severity: model.SevWarning, Code: model.IssueDeviceSource, File: nodeDir,
			Message: fmt.Sprintf("cannot list NUMA nodes: %v; NUMA nodes of CPU cores unknown", err),
		})
	default:
		t.numaSys = true
		for _, e := range entries {
			num, ok := strings.CutPrefix(e.Name(), "node")
			if !ok {
				continue
			}
			node, err := strconv.Atoi(num)
			if err != nil || node < 0 {
				continue
			}
			p := filepath.Join(nodeDir, e.Name(), "cpulist")
			cpus, err := readCPUList(p)
			if err != nil {
				t.issues = append(t.issues, model.Issue{
					Severity: model.SevWarning, Code: model.IssueDeviceSource, File: p,
					Message: fmt.Sprintf("cannot read NUMA node %d's CPUs: %v", node, err),
				})
				continue
			}
			for _, c := range cpus {
				t.nodeOf[c] = node
			}
		}
	}

	memPath := filepath.Join(h.opts.ProcRoot, "meminfo")
	mem, err := readMemTotal(memPath)
	if h.opts.MemBytes > 0 {
		mem, err = h.opts.MemBytes, nil
	}
	if err != nil {
		t.issues = append(t.issues, model.Issue{
			Severity: model.SevWarning, Code: model.IssueDeviceSource, File: memPath,
			Message: fmt.Sprintf("host memory unknown: %v", err),
		})
	}
	t.memBytes = mem
	return t
}

func (t *hostTopo) equal(o *hostTopo) bool {
	if t.numaSys != o.numaSys || t.memBytes != o.memBytes || !slices.Equal(t.online, o.online) ||
		len(t.nodeOf) != len(o.nodeOf) || len(t.issues) != len(o.issues) {
		return false
	}
	for k, v := range t.nodeOf {
		if w, ok := o.nodeOf[k]; !ok || w != v {
			return false
		}
	}
	for i := range t.issues {
		if t.issues[i] != o.issues[i] {
			return false
		}
	}
	return true
}

// readCPUList reads a kernel CPU list file ("0-3,8-11\n"; empty for a node
// without CPUs).
func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cpus, err := ParseCPUList(string(b))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return cpus, nil
}

// maxCPUList bounds a CPU list so a corrupt file cannot allocate without
// limit.
const maxCPUList = 1 << 16

// ParseCPUList parses the kernel's CPU list format ("0-3,8,10-11"), as used
// by /sys/devices/system/cpu/online, node cpulists and cgroup cpusets. The
// result is sorted and free of duplicates; an empty list is valid.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return []int{}, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU number %q", lo)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("bad CPU range %q", part)
			}
		}
		if b >= maxCPUList {
			return nil, fmt.Errorf("CPU number %d out of range", b)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// readMemTotal returns MemTotal from a /proc/meminfo file, in bytes.
func readMemTotal(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > (1<<62)/1024 {
			return 0, fmt.Errorf("parse %s: bad MemTotal %q", path, rest)
		}
		// The kernel writes "kB" and means KiB.
		if len(f) > 1 && f[1] != "kB" {
			return 0, fmt.Errorf("parse %s: unexpected MemTotal unit %q", path, f[1])
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("parse %s: no MemTotal line", path)
}

// intersectSorted returns the elements of sorted a that are also in b.
func intersectSorted(a, b []int) []int {
	in := make(map[int]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	out := make([]int, 0, len(a))
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

// PresentCPUs lists the CPUs the machine has at all, online or not and
// whatever this process's affinity (/sys/devices/system/cpu/present, or
// possible where present is missing): a core id outside it cannot be a
// core of this machine, where one outside Host's cores may be only
// offline or outside a cgroup's or taskset's mask. sysRoot "" is /sys.
func PresentCPUs(sysRoot string) ([]int, error) {
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	cpus, err := readCPUList(filepath.Join(sysRoot, "devices/system/cpu/present"))
	if errors.Is(err, fs.ErrNotExist) {
		cpus, err = readCPUList(filepath.Join(sysRoot, "devices/system/cpu/possible"))
	}
	if err != nil {
		return nil, fmt.Errorf("the machine's CPUs: %w", err)
	}
	return cpus, nil
}
