package plugin

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/internal/untrusted"
)

// TestParseCleanIsParse: the etcd watch's parse of only the keys Parse
// reads (parseClean, on keys and values already through untrusted.Text)
// gives what Parse gives on everything; and parsedKeys are every key
// Parse reads, so a key added to Parse is not missed by the watch.
func TestParseCleanIsParse(t *testing.T) {
	for _, kv := range []map[string]string{
		{},
		{"allocation_mode": "fractional", "unit_mem": "20g", "unit_proc": "4", "quantum_size": "0.05", "device_mask": "GPU-a, GPU-b", "x/y": "z"},
		{"allocation_mode": "weird", "unit_mem": "1k", "unit_proc": "x", "quantum_size": "-1", "other": "1"},
		{"device_mask": "\x1b]52;c;aGk=\x07,GPU-\u202eevil", "evil\x1b[2Jkey": "\x1b[31mred", "unit_mem": "2g\u202e"},
	} {
		clean := map[string]string{}
		for k, v := range kv {
			clean[untrusted.Text(k)] = untrusted.Text(v)
		}
		want, got := Parse(kv), parseClean(maps.Clone(clean))
		if got.AllocationMode != want.AllocationMode || got.UnitMem != want.UnitMem || got.UnitProc != want.UnitProc ||
			got.Quantum.String() != want.Quantum.String() || !slices.Equal(got.DeviceMask, want.DeviceMask) ||
			!slices.Equal(got.Problems, want.Problems) || got.BadUnits != want.BadUnits || !maps.Equal(got.Raw, want.Raw) {
			t.Errorf("%q:\nparseClean %+v\nParse      %+v", kv, got, want)
		}
	}
	src, err := os.ReadFile("settings.go")
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, m := range regexp.MustCompile(`kv\["([a-z_]+)"\]`).FindAllStringSubmatch(string(src), -1) {
		read = append(read, m[1])
	}
	slices.Sort(read)
	keys := slices.Clone(parsedKeys[:])
	slices.Sort(keys)
	if !slices.Equal(slices.Compact(read), keys) {
		t.Fatalf("Parse reads %v; parsedKeys are %v", read, keys)
	}
}
