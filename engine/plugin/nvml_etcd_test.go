//go:build cgo && linux

package plugin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/internal/etcdtest"
	"github.com/fgtop/fgtop/model"
)

// H100Node is go-nvml's dgxh100 mock cut to n GPUs, each an H100 80GB as
// the driver reports it (81,559 MiB) with 132 SMs.
func h100Node(t testing.TB, n int) (*server.Server, []string) {
	srv := dgxh100.NewWithGPUs(gpus.Multiple(n, gpus.H100_SXM5_80GB)...)
	var uuids []string
	for _, d := range srv.Devices {
		dev := d.(*server.Device)
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 81559 << 20, Free: 81559 << 20}, nvml.SUCCESS
		}
		dev.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) {
			return nvml.DeviceAttributes{MultiprocessorCount: 132}, nvml.SUCCESS
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
		uuids = append(uuids, strings.TrimPrefix(dev.UUID, "GPU-"))
	}
	return srv, uuids
}

func nvmlSource(t testing.TB, n int) (inventory.Source, []string) {
	srv, uuids := h100Node(t, n)
	dir := t.TempDir()
	src := inventory.NewNVML(srv, inventory.NVMLOptions{SysRoot: dir, ProcRoot: dir}, nil)
	if src.InitErr() != nil {
		t.Fatal(src.InitErr())
	}
	return src, uuids
}

func cudaDevs(inv *inventory.Inventory) string {
	var out []string
	for _, d := range inv.Devices {
		if d.Name != "cuda" {
			continue
		}
		c := d.Capacity.String()
		if d.CapacityUnknown {
			c = "?"
		}
		out = append(out, fmt.Sprintf("%s=%s/%s", d.ID, c, d.Slot))
	}
	return strings.Join(out, " ")
}

// TestNVMLSMCount: the SM count comes from NVML (GetAttributes), and the
// fractional rule gives 3.98 shares per H100 80GB with unit_mem = 20g.
func TestNVMLSMCount(t *testing.T) {
	inner, _ := nvmlSource(t, 2)
	src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Flag: model.PluginCUDAFractional},
		File: plugin.Parse(map[string]string{"unit_mem": "20g"}), FilePath: "x.json"})
	src.Start(time.Second)
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range inv.Devices {
		if d.Name == "cuda" && (d.Processors != 132 || d.Capacity.String() != "3.98" || d.Slot != model.SlotCUDAShares || !strings.HasPrefix(string(d.ID), "GPU-")) {
			t.Fatalf("device %+v", d)
		}
	}
	if inv.Plugin == nil || inv.Plugin.Source != plugin.RuleFlag || inv.Plugin.Settings != "file x.json" || !inv.Fractional {
		t.Fatalf("plugin %+v fractional %v", inv.Plugin, inv.Fractional)
	}
}

// TestEtcdNodeScopeAndWatch runs a real etcd: the node scope overrides the
// global key for its agent only, a change reaches Poll through Changed
// within a second, a stopped etcd is an issue naming etcd and its
// address with the last settings kept, and a restarted one is followed
// again.
func TestEtcdNodeScopeAndWatch(t *testing.T) {
	etcd := etcdtest.Start(t)
	g := plugin.GlobalPrefix("local")
	etcd.Put(g+"allocation_mode", "fractional")
	etcd.Put(g+"unit_mem", "2g")
	etcd.Put(plugin.NodePrefix("local", "i-a")+"unit_mem", "20g")

	st, err := plugin.ReadEtcd(context.Background(), plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Agents: []model.AgentID{"i-a", "i-b"}})
	if err != nil {
		t.Fatal(err)
	}
	if st["i-a"].UnitMem != 20<<30 || st["i-b"].UnitMem != 2<<30 || !st["i-b"].Fractional() {
		t.Fatalf("i-a %+v\ni-b %+v", st["i-a"], st["i-b"])
	}

	inner, uuids := nvmlSource(t, 4)
	src := plugin.NewSource(inner, plugin.Options{Etcd: plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Agents: []model.AgentID{"i-a"},
		Timeout: time.Second, Recheck: time.Second}})
	start := time.Now()
	src.Start(3 * time.Second)
	defer src.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Start waited %v for a live etcd", d)
	}
	poll := func() *inventory.Inventory {
		inv, err := src.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	inv := poll()
	if got := cudaDevs(inv); strings.Count(got, "=3.98/cuda.shares") != 4 {
		t.Fatalf("node scope unit_mem = 20g: want 4 GPUs at 3.98, got %s", got)
	}
	if inv.Plugin.Source != plugin.RuleSettings || !inv.Plugin.SettingsOK || inv.Plugin.Settings != "etcd "+etcd.Endpoint {
		t.Fatalf("plugin %+v", inv.Plugin)
	}

	// A change: the watch tells Changed at once.
	drain(src.Changed())
	changedAt := time.Now()
	etcd.Put(plugin.NodePrefix("local", "i-a")+"unit_mem", "40g")
	waitChanged(t, src, time.Second)
	// Changed may also be a recheck's that crossed the Put; the new
	// settings are there within a second of it all the same.
	for until := changedAt.Add(time.Second); ; {
		got := cudaDevs(poll())
		if strings.Count(got, "=1.99/cuda.shares") == 4 {
			break
		}
		if time.Now().After(until) {
			t.Fatalf("after unit_mem = 40g: %s", got)
		}
		select {
		case <-src.Changed():
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("etcd change to Changed: %v", time.Since(changedAt))

	// Switch to cuda_open with a mask: ids 0, 1, 3.
	etcd.Put(g+"device_mask", uuids[2])
	etcd.Put(g+"allocation_mode", "discrete")
	deadline := time.Now().Add(3 * time.Second)
	for {
		if got := cudaDevs(poll()); got == "0=1/cuda.device 1=1/cuda.device 3=1/cuda.device" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("discrete with a mask: %s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// etcd stops: an issue naming etcd and its address; the settings are kept.
	etcd.Stop()
	deadline = time.Now().Add(6 * time.Second)
	for {
		inv = poll()
		if hasIssue(inv, "etcd at "+etcd.Endpoint) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no etcd issue 6s after it stopped: %v", inv.Issues)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := cudaDevs(inv); got != "0=1/cuda.device 1=1/cuda.device 3=1/cuda.device" || inv.Plugin.SettingsOK {
		t.Fatalf("settings not kept while etcd is down: %s %+v", got, inv.Plugin)
	}

	// Back: followed again, issue gone.
	etcd.Restart()
	etcd.Put(g+"allocation_mode", "fractional")
	deadline = time.Now().Add(8 * time.Second)
	for {
		inv = poll()
		if !hasIssue(inv, "etcd at") && strings.Contains(cudaDevs(inv), "cuda.shares") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not followed after a restart: %s %v", cudaDevs(inv), inv.Issues)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEtcdDownAtStart: with etcd unreachable from the start, Start returns
// within its bound and fractional capacities are unknown, never 1.
func TestEtcdDownAtStart(t *testing.T) {
	etcd := etcdtest.Start(t)
	etcd.Stop()
	inner, _ := nvmlSource(t, 2)
	src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Flag: model.PluginCUDAFractional},
		Etcd: plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Timeout: 500 * time.Millisecond}})
	start := time.Now()
	src.Start(1500 * time.Millisecond)
	defer src.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Start waited %v", d)
	}
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := cudaDevs(inv); strings.Count(got, "=?/cuda.shares") != 2 {
		t.Fatalf("want unknown capacities, got %s", got)
	}
	if !hasIssue(inv, "etcd at "+etcd.Endpoint) {
		t.Fatalf("no issue naming etcd: %v", inv.Issues)
	}
}

// TestEtcdDownAtStartDefault: with etcd unreachable from the start and
// nothing else telling, the GPUs are shown as cuda_open registers them, and
// the etcd issue says that is only the default (the unread settings may say
// fractional) and how to settle it, rather than that fractional capacities
// are unknown while none is shown.
func TestEtcdDownAtStartDefault(t *testing.T) {
	etcd := etcdtest.Start(t)
	etcd.Stop()
	inner, _ := nvmlSource(t, 2)
	src := plugin.NewSource(inner, plugin.Options{Etcd: plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Timeout: 500 * time.Millisecond}})
	src.Start(1500 * time.Millisecond)
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if inv.Plugin == nil || inv.Plugin.Source != plugin.RuleDefault {
		t.Fatalf("plugin %+v, want decided by default", inv.Plugin)
	}
	for _, want := range []string{"etcd at " + etcd.Endpoint, "only because nothing else tells", "--cuda-plugin"} {
		if !hasIssue(inv, want) {
			t.Errorf("no issue says %q: %v", want, inv.Issues)
		}
	}
	if hasIssue(inv, "fractional capacities are unknown") {
		t.Errorf("an issue speaks of fractional capacities on GPUs shown as cuda_open: %v", inv.Issues)
	}
}

// TestEtcdDownAtStartOpen: with etcd unreachable and cuda_open decided
// by a flag (or the kernels), the etcd issue says the device_mask is
// unknown, not that fractional capacities are.
func TestEtcdDownAtStartOpen(t *testing.T) {
	etcd := etcdtest.Start(t)
	etcd.Stop()
	inner, _ := nvmlSource(t, 2)
	src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Flag: model.PluginCUDAOpen},
		Etcd: plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint}, Timeout: 500 * time.Millisecond}})
	src.Start(1500 * time.Millisecond)
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !hasIssue(inv, "etcd at "+etcd.Endpoint) || !hasIssue(inv, "a device_mask is unknown") {
		t.Errorf("want an etcd issue saying the device_mask is unknown: %v", inv.Issues)
	}
	if hasIssue(inv, "fractional capacities are unknown") {
		t.Errorf("an issue speaks of fractional capacities on GPUs registered as cuda_open: %v", inv.Issues)
	}
}

func hasIssue(inv *inventory.Inventory, sub string) bool {
	for _, i := range inv.Issues {
		if strings.Contains(i.Message, sub) {
			return true
		}
	}
	return false
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func waitChanged(t *testing.T, src *plugin.Source, within time.Duration) {
	t.Helper()
	select {
	case <-src.Changed():
	case <-time.After(within):
		t.Fatalf("no Changed within %v of an etcd change", within)
	}
}

// TestNVMLSMCountFallback: where nvmlDeviceGetAttributes does not answer
// for a whole GPU, the SM count is the core count over the cores per SM of
// the architecture (16,896 / 128 = 132 on Hopper); an architecture whose
// cores per SM vary by chip gives no count, and no capacity is guessed.
func TestNVMLSMCountFallback(t *testing.T) {
	for _, tc := range []struct {
		arch nvml.DeviceArchitecture
		want int
	}{{nvml.DEVICE_ARCH_HOPPER, 132}, {nvml.DEVICE_ARCH_AMPERE, 0}} {
		srv, _ := h100Node(t, 1)
		dev := srv.Devices[0].(*server.Device)
		dev.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) { return nvml.DeviceAttributes{}, nvml.ERROR_NOT_SUPPORTED }
		dev.GetNumGpuCoresFunc = func() (int, nvml.Return) { return 16896, nvml.SUCCESS }
		arch := tc.arch
		dev.GetArchitectureFunc = func() (nvml.DeviceArchitecture, nvml.Return) { return arch, nvml.SUCCESS }
		dir := t.TempDir()
		inner := inventory.NewNVML(srv, inventory.NVMLOptions{SysRoot: dir, ProcRoot: dir}, nil)
		src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Flag: model.PluginCUDAFractional}, File: plugin.Parse(nil), FilePath: "p"})
		src.Start(0)
		inv, err := src.Poll(context.Background())
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		d := inv.Devices[0]
		if d.Processors != tc.want {
			t.Fatalf("arch %d: %d SMs, want %d", arch, d.Processors, tc.want)
		}
		if tc.want == 0 && !d.CapacityUnknown {
			t.Fatalf("capacity %s from an unknown SM count", d.Capacity)
		}
		if tc.want == 132 && d.Capacity.String() != "16.50" {
			t.Fatalf("capacity %s, want 16.50 with the defaults", d.Capacity)
		}
	}
}

// TestAgentsMaskDifferentGPUs: two agents of one node whose node scopes
// mask different GPUs (cuda_open) register different sets; the node shows
// every GPU some agent registers, keeping the indexes, and leaves out only
// the GPU both mask, with an issue naming each agent's mask. Settings
// that differ in anything else still show the first agent's registration.
func TestAgentsMaskDifferentGPUs(t *testing.T) {
	etcd := etcdtest.Start(t)
	inner, uuids := nvmlSource(t, 4)
	etcd.Put(plugin.NodePrefix("local", "i-a")+"device_mask", uuids[1]+","+uuids[3])
	// As cuda_open reads a mask: bare UUIDs, exactly, no space after the
	// comma (TestAgentsOpenMasksAsWritten has the items it does not take).
	etcd.Put(plugin.NodePrefix("local", "i-b")+"device_mask", uuids[3]+","+uuids[2])
	src := plugin.NewSource(inner, plugin.Options{Etcd: plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint},
		Agents: []model.AgentID{"i-a", "i-b"}, Timeout: time.Second, Recheck: time.Second}})
	src.Start(3 * time.Second)
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := cudaDevs(inv); got != "0=1/cuda.device 1=1/cuda.device 2=1/cuda.device" {
		t.Errorf("masks {1,3} and {3,2}: got %q, want GPUs 0, 1 and 2 (3 is masked by both)", got)
	}
	var msg string
	for _, is := range inv.Issues {
		if is.Code == model.IssuePluginSettings {
			msg = is.Message
		}
	}
	for _, w := range []string{"i-a masks " + uuids[1], "i-b masks", "left out: " + uuids[3]} {
		if !strings.Contains(msg, w) {
			t.Errorf("issue %q lacks %q", msg, w)
		}
	}

	if inv.Plugin == nil || inv.Plugin.SettingsDiffer {
		t.Errorf("masks alone differ: plugin %+v, want the registrations merged, not differing", inv.Plugin)
	}

	// unit_proc differs too: the first agent's registration, as before.
	etcd.Put(plugin.NodePrefix("local", "i-b")+"unit_proc", "4")
	deadline := time.Now().Add(3 * time.Second)
	for {
		if inv, err = src.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := cudaDevs(inv); got == "0=1/cuda.device 2=1/cuda.device" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("settings differing beyond the mask: got %q, want i-a's GPUs 0 and 2", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// cuda_open reads neither unit, but the masks are no longer merged:
	// the GPUs shown (0, 2) are i-a's, and i-b registers 0 and 1.
	if inv.Plugin == nil || !inv.Plugin.SettingsDiffer {
		t.Errorf("masks unmerged under cuda_open: plugin %+v, want the registrations differing", inv.Plugin)
	}
	// A different allocation_mode is a different plugin: what the first
	// agent registers is not the second's.
	etcd.Put(plugin.NodePrefix("local", "i-b")+"allocation_mode", "fractional")
	deadline = time.Now().Add(3 * time.Second)
	for {
		if inv, err = src.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
		if inv.Plugin != nil && inv.Plugin.SettingsDiffer {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("allocation_mode differs: plugin %+v, want SettingsDiffer", inv.Plugin)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
