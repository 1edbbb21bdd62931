package inventory

import (
	"context"
	"errors"
	"os"
	"testing"
)

// The mock plugin files and kernel CPU lists are outside input: whatever
// they hold, parsing returns a value or a *ConfigError, never panics.
// The fuzz bodies use context.Background, not t.Context: when -fuzztime
// runs out, the fuzzer cancels the context of the input in flight, and a
// Poll that honours it would be reported as a failure (CI saw exactly that).

func FuzzParseMockConfig(f *testing.F) {
	for _, p := range []string{fixtureTOML} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(mockTOML(a100("u0", 0), `{ mother_uuid = "u0", model_name = "MIG-1g", numa_node = 0, subproc_count = 1, memory_size = "1g", is_mig_device = true }`)))
	f.Add([]byte("slot_name = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseMockConfig("f.toml", data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		// A valid config always yields a device list.
		src := NewMockFromConfig(cfg, nil, nil)
		if _, err := src.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseMockSettings(f *testing.F) {
	b, err := os.ReadFile(fixtureEtcd)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"allocation_mode":"fractional","unit_mem":"512m","unit_proc":2.5,"quantum_size":"1E-3","device_mask":"a,b"}`))
	f.Add([]byte(`{"config":{"plugins":{"accelerator":{"cuda":{}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseMockSettings("f.json", data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		if s.UnitMem < MinUnitMem || s.UnitProc < MinUnitProc || s.QuantumSize.Sign() <= 0 {
			t.Fatalf("accepted out-of-range settings %+v", s)
		}
		s.Shares(40<<30, 108)
	})
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8,10-11\n", "", "5", "3-1", "0-65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		for i := 1; i < len(cpus); i++ {
			if cpus[i] <= cpus[i-1] {
				t.Fatalf("%q: not sorted and unique: %v", s, cpus)
			}
		}
	})
}
