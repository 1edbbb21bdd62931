package plugin

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/internal/untrusted"
)

// FuzzParse: any etcd values parse without panic, within bounds, a
// capacity computed from them is never negative, and no text they give
// for display reaches a terminal raw.
func FuzzParse(f *testing.F) {
	f.Add("fractional", "20g", "8", "0.1", "a,b")
	f.Add("discrete", "512m", "2", "1E+3", "")
	f.Add("x", "1e400g", "99999999999999999999", "NaN", ",,,")
	f.Fuzz(func(t *testing.T, mode, mem, proc, q, mask string) {
		start := time.Now()
		s := Parse(map[string]string{"allocation_mode": mode, "unit_mem": mem, "unit_proc": proc, "quantum_size": q, "device_mask": mask})
		if c, ok := s.Capacity(85520809984, 132); ok && c.Sign() < 0 {
			t.Fatalf("negative capacity %s", c)
		}
		if len(s.DeviceMask) > MaxMaskItems {
			t.Fatalf("%d mask items", len(s.DeviceMask))
		}
		for _, txt := range append(append([]string{s.String()}, s.Problems...), s.DeviceMask...) {
			if !untrusted.Safe(txt) {
				t.Fatalf("raw text %q", txt)
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

// FuzzParseFile: --plugin-config documents never panic.
func FuzzParseFile(f *testing.F) {
	f.Add([]byte(`{"cuda": {"allocation_mode": "fractional", "unit_mem": "20g"}}`))
	f.Add([]byte("[cuda]\nunit_proc = 8\ndevice_mask = [\"a\", \"b\"]\n"))
	f.Add([]byte(`{"config": {"plugins": {"accelerator": {"cuda": {"x": {"y": true}}}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseFile("f", b)
	})
}

// FuzzParseCapacities: --fgpu-capacity never panics and never accepts a
// negative count.
func FuzzParseCapacities(f *testing.F) {
	f.Add("16.5")
	f.Add("GPU-a=1,0=2.25,3")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCapacities(s)
		if err != nil {
			return
		}
		if c.HasAll && c.All.Sign() < 0 {
			t.Fatal("negative")
		}
		for _, v := range c.PerDevice {
			if v.Sign() < 0 {
				t.Fatal("negative")
			}
		}
	})
}

// FuzzRelKey: etcd keys under the prefix always give a key, never panic.
func FuzzRelKey(f *testing.F) {
	f.Add("unit_mem")
	f.Add("a%2F%zz/b%")
	f.Fuzz(func(t *testing.T, rest string) {
		p := GlobalPrefix("local")
		k, ok := RelKey(p, p+rest)
		if ok != (rest != "") {
			t.Fatalf("RelKey(%q) ok=%v", rest, ok)
		}
		_ = k
	})
}

// FuzzEvidence: any resource.txt text is read without panic.
func FuzzEvidence(f *testing.F) {
	f.Add("CUDA.SHARES_SHARES=GPU-a:0.5\nCUDA_RESOURCE_VIRTUALIZED=1\n")
	f.Add("CUDA.DEVICE_SHARES=0:1,1:1\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = evidenceOf(strings.NewReader(s))
	})
}
