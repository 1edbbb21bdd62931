package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// unregisteredSource is a reading whose agents' device_masks differ: un
// are the GPUs each agent's own plugin leaves out.
type unregisteredSource struct {
	inventory.Source
	un map[model.AgentID]map[model.DeviceID]bool
}

func (u unregisteredSource) Poll(ctx context.Context) (*inventory.Inventory, error) {
	inv, err := u.Source.Poll(ctx)
	if inv != nil {
		c := *inv
		c.AgentUnregistered = u.un
		inv = &c
	}
	return inv, err
}

// TestKernelOnGPUItsAgentDoesNotRegister: on a node whose agents mask
// different GPUs, a GPU is shown because some agent registers it; a
// kernel of an agent whose own mask leaves that GPU out holds it anyway
// (the mask changed under it, or the file is not the agent's): an error
// naming the agent and the kernel, not a silent bar. Kernels of agents
// that register the GPU are no issue.
func TestKernelOnGPUItsAgentDoesNotRegister(t *testing.T) {
	rootA, rootB := t.TempDir(), t.TempDir()
	split := string(readFixture(t, "resource.cuda-shares-split.txt"))
	writeKernel(t, rootA, kernelC, []byte(split))
	writeKernel(t, rootB, "22222222-2222-4222-8222-222222222222", []byte(split))
	_, opts := fixtureTree(t)
	const d3 = model.DeviceID("c59395cd-ac91-4cd3-a1b0-3d2568aa2d03")
	opts.Inventory = unregisteredSource{opts.Inventory, map[model.AgentID]map[model.DeviceID]bool{"i-b": {d3: true}}}
	opts.Roots = []scratch.Root{{Path: rootA, Agent: "i-a"}, {Path: rootB, Agent: "i-b"}}
	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, iss := range snap.Issues {
		if strings.Contains(iss.Message, "does not register it") {
			got = append(got, string(iss.Device.ID)+": "+iss.Message)
		}
	}
	want := "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03: cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d03 is held by kernels of i-b, whose CUDA plugin does not register it (its device_mask leaves it out; another agent registers it); kernel 22222222-2222-4222-8222-222222222222"
	if len(got) != 1 || got[0] != want {
		t.Errorf("issues %q\nwant [%q]", got, want)
	}
}
