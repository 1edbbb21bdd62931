//go:build cgo && linux

package inventory

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// smCounter reads a GPU's streaming multiprocessor (SM) count, the
// "subproc_count" of Backend.AI's fractional capacity rule. NVML has no
// call that is documented to give it for a whole GPU, so it tries, in
// order:
//
//  1. nvmlDeviceGetAttributes (DeviceAttributes.MultiprocessorCount): the
//     count itself; NVML documents it for MIG devices, and recent drivers
//     answer it for whole GPUs too.
//  2. nvmlDeviceGetNumGpuCores divided by the CUDA cores per SM of the
//     GPU's architecture (nvmlDeviceGetArchitecture): the core count is
//     NOT the SM count (an H100 SXM has 16,896 cores in 132 SMs).
//
// Each entry point is looked up first where the library can say: go-nvml
// binds symbols lazily, and calling one an older driver lacks aborts the
// process. 0 means unknown.
type smCounter struct {
	attrs, cores, arch bool
}

func newSMCounter(lib nvml.Interface) smCounter {
	var c smCounter
	func() {
		defer func() {
			if recover() != nil {
				// A mock without Extensions: the calls are guarded anyway.
				c = smCounter{attrs: true, cores: true, arch: true}
			}
		}()
		ext := lib.Extensions()
		if ext == nil {
			c = smCounter{attrs: true, cores: true, arch: true}
			return
		}
		has := func(sym string) bool { return ext.LookupSymbol(sym) == nil }
		// Only _v2: go-nvml's fallback names a symbol the header may map
		// to _v2 as well, and a missing one aborts the process.
		c.attrs = has("nvmlDeviceGetAttributes_v2")
		c.cores = has("nvmlDeviceGetNumGpuCores")
		c.arch = has("nvmlDeviceGetArchitecture")
	}()
	return c
}

// count returns h's SM count, 0 when it cannot be told.
func (c smCounter) count(h nvml.Device) int {
	if c.attrs {
		if a, ret := call(h.GetAttributes); ret == nvml.SUCCESS && a.MultiprocessorCount > 0 {
			return int(a.MultiprocessorCount)
		}
	}
	if !c.cores || !c.arch {
		return 0
	}
	cores, ret := call(h.GetNumGpuCores)
	if ret != nvml.SUCCESS || cores <= 0 {
		return 0
	}
	arch, ret := call(h.GetArchitecture)
	if ret != nvml.SUCCESS {
		return 0
	}
	per := coresPerSM(arch)
	if per == 0 || cores%per != 0 {
		return 0
	}
	return cores / per
}

// coresPerSM is the FP32 CUDA cores per SM of an architecture (NVIDIA's
// architecture whitepapers); 0 where it varies within the architecture or
// is not known, so that no SM count is guessed.
func coresPerSM(a nvml.DeviceArchitecture) int {
	switch a {
	case nvml.DEVICE_ARCH_KEPLER:
		return 192
	case nvml.DEVICE_ARCH_MAXWELL, nvml.DEVICE_ARCH_HOPPER:
		return 128
	case nvml.DEVICE_ARCH_VOLTA, nvml.DEVICE_ARCH_TURING:
		return 64
	case nvml.DEVICE_ARCH_ADA:
		return 128
	}
	// Pascal (GP100 64, others 128), Ampere (GA100 64, GA10x 128) and
	// Blackwell vary by chip: no guess.
	return 0
}
