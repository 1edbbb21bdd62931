package partition

import (
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"path/filepath"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// The fixture host: 32 cores ("0".."31"), 4 mock GPUs of 1.00 fGPU each,
// 256 GiB of memory.
const (
	gpu1 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
	gpu2 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
	gpu3 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"
	gpu4 = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04"

	agentA = "i-gpu-node01-numa0"
	agentB = "i-gpu-node01-numa1"
)

func hostDevices(cores int, gpus []string, memGiB int64) []model.Device {
	var out []model.Device
	for i, g := range gpus {
		out = append(out, model.Device{ID: model.DeviceID(g), Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.One, Index: i})
	}
	for c := range cores {
		out = append(out, model.Device{ID: model.DeviceID(fmt.Sprint(c)), Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount, Capacity: model.One, Index: c})
	}
	if memGiB > 0 {
		out = append(out, model.Device{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: model.NewDec(memGiB<<30, 0)})
	}
	return out
}

func fixtureDevices() []model.Device {
	return hostDevices(32, []string{gpu1, gpu2, gpu3, gpu4}, 256)
}

// kernel is a live kernel of agent holding amount cuda.shares on gpu.
func kernel(id string, agent model.AgentID, gpu string, amount string) *model.Kernel {
	return &model.Kernel{ID: model.KernelID(id), Agent: agent, State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {model.DeviceID(gpu): model.MustDec(amount)}}}
}

func snapshot(devs []model.Device, ks ...*model.Kernel) *model.Snapshot {
	s := &model.Snapshot{Devices: devs}
	s.SetKernels(ks)
	return s
}

// loadFixture copies a testdata file into a temp dir and loads it.
func loadFixture(t *testing.T, name string) *agentconfig.Config {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(path, raw, 0o640); err != nil {
		t.Fatal(err)
	}
	c, err := agentconfig.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return c
}

func parseConfig(t *testing.T, text string) *agentconfig.Config {
	t.Helper()
	return parseConfigAs(t, text, "")
}

// parseConfigAs is parseConfig reading a file without allocation tables
// in format f ("" is the default, main's slot-based form).
func parseConfigAs(t *testing.T, text string, f agentconfig.Format) *agentconfig.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.toml")
	text = testfix.AgentTOML(text)
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	c, err := agentconfig.ParseAssuming(path, []byte(text), f)
	if c == nil {
		t.Fatalf("load: %v", err)
	}
	return c
}
