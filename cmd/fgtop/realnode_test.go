//go:build linux && cgo

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/internal/etcdtest"
	"github.com/fgtop/fgtop/internal/fakenvml"
)

// realNode is a GPU node as the issue 19 check sees it: the real cgo
// binary loading the fake libnvidia-ml.so.1 (four H100 80GB, 132 SMs), a
// real etcd holding the CUDA plugin settings, and an agent.toml whose
// [etcd] points at it and whose scratch root holds kernels' resource.txt.
type realNode struct {
	bin, lib, nvml, agentToml, scratch string
	etcd                               *etcdtest.Server
	gpus                               []fakenvml.GPU
}

const (
	realNodeNS    = "fgtop-e2e"
	realNodeAgent = "i-e2e-node"
)

func newRealNode(t *testing.T) *realNode {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts etcd")
	}
	lib := fakenvml.Build(t) // skips without gcc
	etcd := etcdtest.Start(t)
	dir := t.TempDir()
	n := &realNode{
		bin: buildRealBinary(t), lib: lib, etcd: etcd, gpus: fakenvml.H100s(4),
		nvml: filepath.Join(dir, "nvml.toml"), agentToml: filepath.Join(dir, "agent.toml"),
		scratch: filepath.Join(dir, "scratches"),
	}
	if err := os.Mkdir(n.scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	fakenvml.Config{GPUs: n.gpus}.Write(t, n.nvml)
	host, port, _ := strings.Cut(etcd.Endpoint, ":")
	// service-addr on a port nobody listens on: the agent is down, and no
	// other test's agent on 6003 can answer for it.
	text := fmt.Sprintf(`[etcd]
namespace = %q
addr = { host = %q, port = %s }

[agent]
id = %q
backend = "docker"
service-addr = { host = "127.0.0.1", port = %d }

[container]
scratch-root = %q

[resource]
`, realNodeNS, host, port, realNodeAgent, freeTCPPort(t), n.scratch)
	if err := os.WriteFile(n.agentToml, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (n *realNode) env() []string {
	return append(fakenvml.Env(n.lib, n.nvml, ""), "NO_COLOR=1")
}

// bare is a GPU's UUID without "GPU-", as device_mask and NVML's
// snapshot field name it.
func (n *realNode) bare(i int) string { return strings.TrimPrefix(n.gpus[i].UUID, "GPU-") }

// settings replaces the global and node-scope CUDA plugin settings.
func (n *realNode) settings(t *testing.T, global, node map[string]string) {
	t.Helper()
	g, p := plugin.GlobalPrefix(realNodeNS), plugin.NodePrefix(realNodeNS, realNodeAgent)
	for _, k := range []string{"allocation_mode", "unit_mem", "unit_proc", "quantum_size", "device_mask"} {
		n.etcd.Delete(g + k)
		n.etcd.Delete(p + k)
	}
	for k, v := range global {
		n.etcd.Put(g+k, v)
	}
	for k, v := range node {
		n.etcd.Put(p+k, v)
	}
}

// kernels replaces the scratch tree's kernels: id → the allocation lines
// of its resource.txt (as the agent writes them, §1.2 of the domain notes).
func (n *realNode) kernels(t *testing.T, ks map[string]string) {
	t.Helper()
	ents, err := os.ReadDir(n.scratch)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(n.scratch, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for id, lines := range ks {
		dir := filepath.Join(n.scratch, id, "config")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		text := "SCRATCH_SIZE=0m\nMOUNTS=\n" + lines + "CID=" + strings.Repeat("ab", 32) + "\n"
		if err := os.WriteFile(filepath.Join(dir, "resource.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// e2eSnap is the part of `snapshot --json` the check reads.
type e2eSnap struct {
	Allocator struct {
		AllocationMode string `json:"allocation_mode"`
		QuantumSize    string `json:"quantum_size"`
	}
	Plugin *struct {
		Kind, Source, Detail, Settings string
		SettingsOK                     bool `json:"settings_ok"`
	}
	Devices []struct {
		Key, Plugin, ID, Slot, UUID string
		Capacity, Free              *string
		Held                        map[string]string
		Total                       string
	}
	Unknown []struct{ Key string } `json:"unknown_devices"`
	Kernels []struct {
		ID  string
		Use *struct {
			Devices []struct {
				Device   string
				Held     string
				Capacity *string
			}
		}
	}
	Issues []struct {
		Severity, Code, Message, Device string
	}
	AllocMapRatio map[string]string `json:"alloc_map_ratio"`
}

func (s *e2eSnap) gpus() []int {
	var out []int
	for i, d := range s.Devices {
		if d.Plugin == "cuda" {
			out = append(out, i)
		}
	}
	return out
}

func (s *e2eSnap) issuesWith(code string) []string {
	var out []string
	for _, is := range s.Issues {
		if is.Code == code {
			out = append(out, is.Message)
		}
	}
	return out
}

// placementIssues fails t on the issues issue 19 is about: an allocation
// on a device the inventory lacks, or a slot no device provides.
func (s *e2eSnap) placementIssues(t *testing.T) {
	t.Helper()
	for _, code := range []string{"unknown-device", "unsupported-resource"} {
		if m := s.issuesWith(code); len(m) > 0 {
			t.Errorf("%s issue(s): %q", code, m)
		}
	}
	if len(s.Unknown) > 0 {
		t.Errorf("unknown_devices: %+v", s.Unknown)
	}
}

func (n *realNode) snapshot(t *testing.T, extra ...string) *e2eSnap {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"snapshot", "--json", "--config", n.agentToml, "--devices", "nvml"}, extra...)
	cmd := exec.CommandContext(ctx, n.bin, args...)
	cmd.Env = n.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fgtop %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var s e2eSnap
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("snapshot JSON: %v\n%s", err, out)
	}
	return &s
}

// sharesRule is the assumed fractional capacity, computed here from the
// fake GPU's own figures: min(memory / unit_mem, SMs / unit_proc) rounded
// down to 0.01, in exact rationals.
func sharesRule(mem uint64, sms int, unitMem uint64, unitProc int) string {
	a := new(big.Rat).SetFrac(new(big.Int).SetUint64(mem), new(big.Int).SetUint64(unitMem))
	b := big.NewRat(int64(sms), int64(unitProc))
	if b.Cmp(a) < 0 {
		a = b
	}
	hundredths := new(big.Int).Quo(new(big.Int).Mul(a.Num(), big.NewInt(100)), a.Denom())
	return fmt.Sprintf("%d.%02d", hundredths.Int64()/100, hundredths.Int64()%100)
}

// TestRealNodePluginRegistration is issue 19's "How it is checked" run
// end to end on the real binary: the fake NVML library's four H100 80GB
// (132 SMs) and the CUDA plugin settings in a real etcd.
func TestRealNodePluginRegistration(t *testing.T) {
	n := newRealNode(t)
	const h100Mem, h100SMs = 85520809984, 132 // the fake's defaults, as the driver reports an H100 80GB
	cap20g := sharesRule(h100Mem, h100SMs, 20<<30, 8)
	if cap20g != "3.98" {
		t.Fatalf("the rule gives %s with unit_mem 20g, the issue says 3.98", cap20g)
	}
	gpu := func(i int) string { return n.gpus[i].UUID }
	fractionalKernels := map[string]string{
		// 1.5 shares on the second GPU only.
		"3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b": `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"1.5"}` + "\nUNIFIED_DEVICES=[]\n" +
			"CUDA.SHARES_SHARES=" + gpu(1) + ":1.50\nMEM_SHARES=root:1g\nCUDA_RESOURCE_VIRTUALIZED=1\n",
		// 1.2 shares split over the first and the fourth.
		"c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63": `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"1.2"}` + "\nUNIFIED_DEVICES=[]\n" +
			"CUDA.SHARES_SHARES=" + gpu(0) + ":0.60," + gpu(3) + ":0.60\nMEM_SHARES=root:1g\nCUDA_RESOURCE_VIRTUALIZED=1\n",
	}
	wantHeld := map[string]string{gpu(0): "0.60", gpu(1): "1.50", gpu(3): "0.60"}

	// checkFractional checks the four GPUs registered as the fractional
	// plugin does with capacity want each, and the kernels on them.
	checkFractional := func(t *testing.T, s *e2eSnap, want string) {
		t.Helper()
		if p := s.Plugin; p == nil || p.Kind != "fractional" || p.Source != "plugin-settings" || !p.SettingsOK || p.Settings != "etcd "+n.etcd.Endpoint {
			t.Errorf("plugin %+v, want fractional decided by the settings from etcd %s", s.Plugin, n.etcd.Endpoint)
		}
		idx := s.gpus()
		if len(idx) != 4 {
			t.Fatalf("%d GPUs, want 4: %+v", len(idx), s.Devices)
		}
		for i, di := range idx {
			d := s.Devices[di]
			if d.ID != gpu(i) || d.UUID != n.bare(i) || d.Slot != "cuda.shares" || d.Capacity == nil || *d.Capacity != want {
				t.Errorf("GPU %d: id %s uuid %s slot %s capacity %v, want %s %s cuda.shares %s", i, d.ID, d.UUID, d.Slot, d.Capacity, gpu(i), n.bare(i), want)
				continue
			}
			if got := d.Held["cuda.shares"]; got != wantHeld[d.ID] {
				t.Errorf("%s holds %q cuda.shares, want %q", d.ID, got, wantHeld[d.ID])
			}
		}
		if r, ok := s.AllocMapRatio[gpu(1)]; !ok || r == "1.5000" {
			t.Errorf("alloc_map_ratio for %s = %q (present %v), want 1.50 over %s", gpu(1), r, ok, want)
		}
		s.placementIssues(t)
	}

	t.Run("fractional settings from etcd", func(t *testing.T) {
		n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g", "quantum_size": "0.05"}, nil)
		n.kernels(t, fractionalKernels)
		s := n.snapshot(t)
		checkFractional(t, s, cap20g)
		if a := s.Allocator; a.AllocationMode != "fractional" || a.QuantumSize != "0.05" {
			t.Errorf("allocator %+v, want fractional with the settings' quantum_size 0.05", a)
		}
		if m := s.issuesWith("plugin-settings"); len(m) > 0 {
			t.Errorf("plugin-settings issues with etcd up: %q", m)
		}
		for _, d := range s.Devices {
			if d.ID == gpu(1) && (d.Free == nil || *d.Free != "2.48") {
				t.Errorf("%s free %v, want 3.98 - 1.50 = 2.48", d.ID, d.Free)
			}
		}
		for _, k := range s.Kernels {
			if k.Use == nil {
				continue
			}
			for _, u := range k.Use.Devices {
				if u.Capacity == nil || *u.Capacity != cap20g {
					t.Errorf("kernel %s on %s: capacity %v, want %s", k.ID, u.Device, u.Capacity, cap20g)
				}
			}
		}
	})

	t.Run("SM count where NVML refuses a full GPU's attributes", func(t *testing.T) {
		// nvml.h documents nvmlDeviceGetAttributes for MIG devices only:
		// the binary falls back on the CUDA cores over Hopper's 128 a SM.
		fakenvml.Config{GPUs: n.gpus, AttributesMIGOnly: true}.Write(t, n.nvml)
		defer fakenvml.Config{GPUs: n.gpus}.Write(t, n.nvml)
		n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}, nil)
		n.kernels(t, fractionalKernels)
		checkFractional(t, n.snapshot(t), cap20g)
	})

	t.Run("node scope over global", func(t *testing.T) {
		// Another agent's node scope must not apply to this one.
		other := plugin.NodePrefix(realNodeNS, "i-another-node") + "unit_mem"
		n.etcd.Put(other, "10g")
		defer n.etcd.Delete(other)
		n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}, map[string]string{"unit_mem": "40g"})
		n.kernels(t, fractionalKernels)
		want := sharesRule(h100Mem, h100SMs, 40<<30, 8)
		if want == cap20g {
			t.Fatal("the override must change the capacity to be seen")
		}
		checkFractional(t, n.snapshot(t), want)

		// And the node scope can name the mode the global scope leaves out.
		n.settings(t, map[string]string{"unit_mem": "20g"}, map[string]string{"allocation_mode": "fractional"})
		checkFractional(t, n.snapshot(t), cap20g)
	})

	t.Run("cuda_open with device_mask", func(t *testing.T) {
		n.settings(t, map[string]string{"device_mask": n.bare(2)}, nil)
		n.kernels(t, map[string]string{
			"9d0e4b7a-1c2f-4e85-8b3a-6f7d2c9e1a54": `SLOTS={"cpu":"1","mem":"1073741824","cuda.device":"1"}` + "\nUNIFIED_DEVICES=[]\n" +
				"CUDA.DEVICE_SHARES=3:1\nMEM_SHARES=root:1g\nCUDA_GLOBAL_DEVICE_IDS=0:3\nCUDA_RESOURCE_VIRTUALIZED=0\n",
		})
		s := n.snapshot(t)
		if s.Plugin == nil || s.Plugin.Kind != "open" || s.Plugin.Source == "" {
			t.Errorf("plugin %+v, want open with the rule that decided", s.Plugin)
		}
		var got []string
		for _, di := range s.gpus() {
			d := s.Devices[di]
			got = append(got, d.ID)
			i, err := strconv.Atoi(d.ID)
			if err != nil || d.UUID != n.bare(i) || d.Slot != "cuda.device" || d.Capacity == nil || *d.Capacity != "1" {
				t.Errorf("device %s: uuid %s slot %s capacity %v, want GPU %s's, cuda.device 1", d.ID, d.UUID, d.Slot, d.Capacity, d.ID)
			}
			if d.UUID == n.bare(2) {
				t.Errorf("the masked GPU is listed as %s", d.ID)
			}
			held := d.Held["cuda.device"]
			if (d.ID == "3") != (held == "1") || (d.ID == "3" && (d.Free == nil || *d.Free != "0")) {
				t.Errorf("device %s holds %q cuda.device, free %v; only 3 is held, fully", d.ID, held, d.Free)
			}
		}
		if fmt.Sprint(got) != "[0 1 3]" {
			t.Errorf("ids %v, want [0 1 3] (the masked third GPU leaves a gap)", got)
		}
		s.placementIssues(t)
	})

	t.Run("evidence in the other plugin's form", func(t *testing.T) {
		// A cuda_open-style index on a node whose settings say fractional:
		// not silently placed, the issue names the GPU it means.
		n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}, nil)
		n.kernels(t, map[string]string{
			"9d0e4b7a-1c2f-4e85-8b3a-6f7d2c9e1a54": `SLOTS={"cpu":"1","mem":"1073741824","cuda.device":"1"}` + "\nUNIFIED_DEVICES=[]\n" +
				"CUDA.DEVICE_SHARES=1:1\nMEM_SHARES=root:1g\nCUDA_RESOURCE_VIRTUALIZED=0\n",
		})
		s := n.snapshot(t)
		m := s.issuesWith("unknown-device")
		if len(m) != 1 || !strings.Contains(m[0], "that is cuda:"+gpu(1)+"'s CUDA index") {
			t.Errorf("unknown-device issues %q, want one naming %s", m, gpu(1))
		}
	})

	t.Run("fgpu-capacity naming no GPU", func(t *testing.T) {
		// A mistyped key reaches no bar: snapshot says so on stderr with
		// the GPUs that are registered, not only in the JSON's issues.
		n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}, nil)
		n.kernels(t, fractionalKernels)
		cmd := exec.Command(n.bin, "snapshot", "--json", "--config", n.agentToml, "--devices", "nvml", "--fgpu-capacity", "9=2")
		cmd.Env = n.env()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if _, err := cmd.Output(); err != nil {
			t.Fatalf("snapshot: %v\n%s", err, stderr.String())
		}
		for _, w := range []string{"flag-unmatched: --fgpu-capacity names 9,", "registered: " + gpu(0) + " (index 0), " + gpu(1) + " (index 1)"} {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
			}
		}
	})

	t.Run("follow and etcd stopped mid-run", func(t *testing.T) {
		n.settings(t, map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}, nil)
		n.kernels(t, fractionalKernels)
		f := n.follow(t)
		f.await(t, "capacity "+cap20g, 30*time.Second, func(s *e2eSnap) bool { return gpuCapacities(s) == strings.Repeat(cap20g+" ", 4) })
		want := sharesRule(h100Mem, h100SMs, 10<<30, 8)
		changed := time.Now()
		n.etcd.Put(plugin.GlobalPrefix(realNodeNS)+"unit_mem", "10g")
		f.await(t, "capacity "+want+" after the change", 3*time.Second, func(s *e2eSnap) bool { return gpuCapacities(s) == strings.Repeat(want+" ", 4) })
		t.Logf("an etcd change reached snapshot --follow in %v", time.Since(changed).Round(time.Millisecond))

		n.etcd.Stop()
		s := f.await(t, "an issue naming etcd", 15*time.Second, func(s *e2eSnap) bool { return namesEtcd(s, n.etcd.Endpoint) })
		// The last settings read are kept while the process runs.
		if got := gpuCapacities(s); got != strings.Repeat(want+" ", 4) {
			t.Errorf("capacities %q with etcd stopped, want the last known %s kept", got, want)
		}
		if s.Plugin == nil || s.Plugin.SettingsOK {
			t.Errorf("plugin %+v: the settings are not fresh", s.Plugin)
		}
	})

	t.Run("etcd stopped from the start", func(t *testing.T) {
		n.etcd.Stop()
		n.kernels(t, fractionalKernels)
		s := n.snapshot(t)
		if !namesEtcd(s, n.etcd.Endpoint) {
			t.Errorf("no issue names etcd at %s: %+v", n.etcd.Endpoint, s.Issues)
		}
		if s.Plugin == nil || s.Plugin.Kind != "fractional" {
			t.Errorf("plugin %+v: the kernels' cuda.shares say fractional", s.Plugin)
		}
		noShareAgainstMadeUpCapacity(t, s)
		for id, held := range wantHeld {
			found := false
			for _, d := range s.Devices {
				if d.ID == id && d.Held["cuda.shares"] == held {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: %s cuda.shares not shown as held", id, held)
			}
		}
		s.placementIssues(t)
		n.exporterHasNoCapacity(t, gpu(1))
		n.allocMapNamesLeftOut(t, gpu(0), gpu(1), gpu(3))
		n.recordedAllocMapNamesLeftOut(t, gpu(1))
		n.checkSaysCapacityUnknown(t)
		n.consoleShowsUnknown(t)
	})
}

// recordedAllocMapNamesLeftOut: the history recorded while the capacities
// were unknown replays them unknown, and `snapshot --at --alloc-map` names
// the held GPUs it leaves out, as the live one does.
func (n *realNode) recordedAllocMapNamesLeftOut(t *testing.T, held string) {
	t.Helper()
	hist := filepath.Join(t.TempDir(), "hist")
	rec := exec.Command(n.bin, "record", "--dir", hist, "--config", n.agentToml, "--devices", "nvml")
	rec.Env = n.env()
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for countSegments(t, hist) == 0 {
		if time.Now().After(deadline) {
			rec.Process.Kill()
			rec.Wait()
			t.Fatal("the recorder wrote no segment in 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	at := time.Now().Add(-500 * time.Millisecond).Format(time.RFC3339Nano)
	rec.Process.Signal(syscall.SIGTERM)
	if err := rec.Wait(); err != nil {
		t.Fatalf("recorder: %v", err)
	}
	cmd := exec.Command(n.bin, "snapshot", "--at", at, "--history", hist, "--alloc-map")
	cmd.Env = n.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("snapshot --at %s --alloc-map: %v\n%s", at, err, stderr.String())
	}
	if strings.Contains(string(out), held) {
		t.Errorf("the recorded --alloc-map gives %s a ratio over an unknown capacity: %s", held, out)
	}
	if !strings.Contains(stderr.String(), held) {
		t.Errorf("the recorded --alloc-map's stderr does not name %s, left out: %q", held, stderr.String())
	}
}

// checkSaysCapacityUnknown: `fgtop check` with the capacities unknown
// says that, naming the flags that tell, and does not send the operator
// after --devices while NVML works.
func (n *realNode) checkSaysCapacityUnknown(t *testing.T) {
	t.Helper()
	cmd := exec.Command(n.bin, "check", "--config", n.agentToml, "--devices", "nvml")
	cmd.Env = n.env()
	out, _ := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "pass --devices") {
		t.Errorf("check asks for --devices while NVML lists the GPUs:\n%s", text)
	}
	if !strings.Contains(text, "--fgpu-capacity") || !strings.Contains(text, n.gpus[1].UUID) {
		t.Errorf("check does not say which capacities are unknown and how to give them:\n%s", text)
	}
}

// allocMapNamesLeftOut: `snapshot --alloc-map` with the capacities unknown
// prints no ratio for the held GPUs and names them on stderr, so an empty
// map is not read as an idle node.
func (n *realNode) allocMapNamesLeftOut(t *testing.T, held ...string) {
	t.Helper()
	cmd := exec.Command(n.bin, "snapshot", "--alloc-map", "--config", n.agentToml, "--devices", "nvml")
	cmd.Env = n.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("snapshot --alloc-map: %v\n%s", err, stderr.String())
	}
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("snapshot --alloc-map: %v\n%s", err, out)
	}
	for _, id := range held {
		if r, ok := m[id]; ok {
			t.Errorf("--alloc-map gives %s = %s over an unknown capacity", id, r)
		}
		if !strings.Contains(stderr.String(), id) {
			t.Errorf("--alloc-map's stderr does not name %s, left out: %q", id, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "etcd "+n.etcd.Endpoint) {
		t.Errorf("--alloc-map's stderr does not say why (etcd %s): %q", n.etcd.Endpoint, stderr.String())
	}
}

// namesEtcd: an issue names etcd and its address (once: the header's
// second line has 80 columns).
func namesEtcd(s *e2eSnap, endpoint string) bool {
	for _, is := range s.Issues {
		if strings.Contains(is.Message, "etcd at "+endpoint) && strings.Count(is.Message, endpoint) == 1 {
			return true
		}
	}
	return false
}

func gpuCapacities(s *e2eSnap) string {
	var b strings.Builder
	for _, di := range s.gpus() {
		if c := s.Devices[di].Capacity; c != nil {
			b.WriteString(*c + " ")
		} else {
			b.WriteString("? ")
		}
	}
	return b.String()
}

// noShareAgainstMadeUpCapacity: with the fractional capacity unknown no
// GPU, kernel or alloc-map entry states one (JSON leaves it out).
func noShareAgainstMadeUpCapacity(t *testing.T, s *e2eSnap) {
	t.Helper()
	for _, di := range s.gpus() {
		d := s.Devices[di]
		if d.Slot != "cuda.shares" || d.Capacity != nil || d.Free != nil {
			t.Errorf("GPU %s: slot %s capacity %v free %v, want cuda.shares with capacity and free absent", d.ID, d.Slot, d.Capacity, d.Free)
		}
	}
	for _, k := range s.Kernels {
		if k.Use == nil {
			continue
		}
		for _, u := range k.Use.Devices {
			if strings.HasPrefix(u.Device, "cuda:") && u.Capacity != nil {
				t.Errorf("kernel %s on %s: capacity %s stated, the capacity is unknown", k.ID, u.Device, *u.Capacity)
			}
		}
	}
	for id, r := range s.AllocMapRatio {
		t.Errorf("alloc_map_ratio %s = %s: a ratio over an unknown capacity", id, r)
	}
}

// exporterHasNoCapacity runs `fgtop exporter` with etcd down and scrapes
// /metrics: the held shares are there, no capacity, free or ratio is.
func (n *realNode) exporterHasNoCapacity(t *testing.T, heldOn string) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.bin, "exporter", "--listen", addr, "--config", n.agentToml, "--devices", "nvml", "--node", "e2e")
	cmd.Env = n.env()
	var stderr lockedBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if strings.Contains(body, `fgtop_device_held_shares{device="`+heldOn+`"`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no held shares for %s on /metrics in 20 s (%v); stderr %s\n%s", heldOn, err, stderr.String(), body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || !strings.Contains(l, `device="GPU-`) {
			continue
		}
		for _, m := range []string{"fgtop_device_capacity", "fgtop_device_free", "fgtop_device_alloc_ratio", "fgtop_device_over_capacity"} {
			if strings.HasPrefix(l, m) {
				t.Errorf("/metrics states a capacity the node never gave: %s", l)
			}
		}
	}
}

// consoleShowsUnknown starts the console at 80x24 in tmux with etcd down:
// the held GPU reads 1.50/?, never against 1.
func (n *realNode) consoleShowsUnknown(t *testing.T) {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Log("no tmux: the console's text is not checked")
		return
	}
	sock := fmt.Sprintf("fgtop-e2e-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	env := strings.Join([]string{"LD_LIBRARY_PATH=" + n.lib, fakenvml.ConfigEnv + "=" + n.nvml, "TERM=tmux-256color"}, " ")
	if out, err := tm("new-session", "-d", "-x", "80", "-y", "24",
		fmt.Sprintf("env %s %s --config %s --devices nvml; sleep 30", env, n.bin, n.agentToml)); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	defer tm("kill-server")
	var screen string
	deadline := time.Now().Add(20 * time.Second)
	for {
		screen, _ = tm("capture-pane", "-p")
		if strings.Contains(screen, "GPU3") && strings.Contains(screen, "etcd at "+n.etcd.Endpoint) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console did not show four GPUs and the issue naming etcd at %s in 20 s:\n%s", n.etcd.Endpoint, screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "GPU1 ") && !strings.Contains(l, "1.50/?") {
			t.Errorf("GPU1's row %q does not read 1.50/?", l)
		}
		if strings.Contains(l, "GPU") && strings.Contains(l, "/1 ") {
			t.Errorf("a GPU row against a capacity of 1: %q", l)
		}
	}
	// The device detail says the capacity is unknown and gives no ratio.
	if _, err := tm("send-keys", "g", "j", "Enter"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		screen, _ = tm("capture-pane", "-p")
		if strings.Contains(screen, "capacity ?") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GPU1's detail does not say capacity ?:\n%s", screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.Contains(screen, "1.5000") {
		t.Errorf("GPU1's detail gives a ratio over a capacity of 1:\n%s", screen)
	}
	if !strings.Contains(screen, "no settings ever read: capacity unknown") {
		t.Errorf("GPU1's detail does not say why its capacity is unknown:\n%s", screen)
	}
}

// lockedBuf is a child's stderr that a test may read while it runs.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// follower reads `snapshot --follow --json` lines.
type follower struct {
	lines  chan *e2eSnap
	stderr *lockedBuf
}

func (n *realNode) follow(t *testing.T) *follower {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, n.bin, "snapshot", "--follow", "--json", "--config", n.agentToml, "--devices", "nvml")
	cmd.Env = n.env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{lines: make(chan *e2eSnap, 64), stderr: &lockedBuf{}}
	cmd.Stderr = f.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			var s e2eSnap
			if json.Unmarshal(sc.Bytes(), &s) == nil && s.Plugin != nil {
				f.lines <- &s
			}
		}
		close(f.lines)
	}()
	return f
}

func (f *follower) await(t *testing.T, what string, within time.Duration, ok func(*e2eSnap) bool) *e2eSnap {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case s, open := <-f.lines:
			if !open {
				t.Fatalf("%s: fgtop exited; stderr: %s", what, f.stderr.String())
			}
			if ok(s) {
				return s
			}
		case <-deadline:
			t.Fatalf("%s: not within %v", what, within)
		}
	}
}
