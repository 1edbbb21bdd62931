package demo

import (
	"github.com/fgtop/fgtop/model"
)

// workload is one kernel request as users send them.
type workload struct {
	slots model.ResourceSlot
}

const gib = int64(1) << 30

// weighted picks an index with probability proportional to its weight.
func (s *sim) weighted(w []int) int {
	total := 0
	for _, x := range w {
		total += x
	}
	r := s.rng.IntN(total)
	for i, x := range w {
		if r < x {
			return i
		}
		r -= x
	}
	return len(w) - 1
}

// fractionalShares are the fGPU amounts users ask for, with how often: small
// notebook shares most, a few above one GPU (which EVENLY splits over two
// devices). 0.25 and 0.75 are not multiples of the 0.1 quantum: the agent
// rounds the share each device gets down (0.25 → 0.2), so SLOTS and the
// *_SHARES lines disagree, as they do on real nodes.
var fractionalShares = []struct {
	v string
	w int
}{
	{"0.1", 3}, {"0.2", 4}, {"0.25", 1}, {"0.3", 3}, {"0.4", 2}, {"0.5", 4},
	{"0.6", 1}, {"0.7", 1}, {"0.75", 1}, {"0.8", 1}, {"1.2", 1}, {"1.5", 1},
}

// draw returns a new kernel's request: a fractional GPU share (half of
// them), whole GPUs, a MIG slice, or CPU only, with cores and memory that
// fit the accelerator.
func (s *sim) draw() workload {
	slots := model.ResourceSlot{}
	mig := 12
	if len(s.migSlots) == 0 {
		mig = 0
	}
	switch s.weighted([]int{50, 15, 3, mig, 20}) {
	case 0: // fractional share
		ws := make([]int, len(fractionalShares))
		for i, f := range fractionalShares {
			ws[i] = f.w
		}
		share := model.MustDec(fractionalShares[s.weighted(ws)].v)
		f := share.Float64()
		cpu := 1 + int64(f*3) + int64(s.rng.IntN(2))
		slots[model.SlotCUDAShares] = share
		slots[model.SlotCPU] = model.DecFromInt64(min(cpu, 8))
		slots[model.SlotMem] = s.memFor(f*32, 64)
	case 1: // one whole GPU
		slots[model.SlotCUDAShares] = model.One
		slots[model.SlotCPU] = model.DecFromInt64(4 + int64(s.rng.IntN(5)))
		slots[model.SlotMem] = model.DecFromInt64([]int64{32, 48, 64}[s.rng.IntN(3)] * gib)
	case 2: // two whole GPUs
		slots[model.SlotCUDAShares] = model.DecFromInt64(2)
		slots[model.SlotCPU] = model.DecFromInt64(8)
		slots[model.SlotMem] = model.DecFromInt64(64 * gib)
	case 3: // a MIG slice
		slot := s.migSlots[s.rng.IntN(len(s.migSlots))]
		slots[slot] = model.One
		cpu := 1 + int64(s.rng.IntN(2))
		if slot.MinorType() == "20g-mig" {
			cpu += 2
		}
		slots[model.SlotCPU] = model.DecFromInt64(cpu)
		slots[model.SlotMem] = s.memFor(float64(cpu)*4, 32)
	default: // CPU only
		cpu := 1 + int64(s.rng.IntN(4))
		slots[model.SlotCPU] = model.DecFromInt64(cpu)
		slots[model.SlotMem] = s.memFor(float64(cpu)*2, 16)
	}
	return workload{slots: slots}
}

// memFor returns a memory size in bytes: the smallest of 2, 4, 8, 16, 32,
// 64 GiB that holds want GiB, sometimes one size up, never above capGiB.
func (s *sim) memFor(want float64, capGiB int64) model.Dec {
	g := int64(2)
	for float64(g) < want && g < capGiB {
		g *= 2
	}
	if s.rng.IntN(3) == 0 && g < capGiB {
		g *= 2
	}
	return model.DecFromInt64(g * gib)
}
