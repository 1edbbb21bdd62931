package profiling

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfiles: each profile is written where asked, in the form its
// name asks for; a path that cannot be made is an error naming it, and a
// second CPU profile while one runs is refused.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, head string
	}{{"heap.pprof", "\x1f\x8b"}, {"heap.txt", "heap profile:"}} {
		p := filepath.Join(dir, c.name)
		if err := WriteHeap(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte(c.head)) {
			t.Errorf("%s starts %q, want %q (%v)", c.name, b[:min(len(b), 16)], c.head, err)
		}
		if c.name == "heap.txt" && !strings.Contains(string(b), "# runtime.MemStats") {
			t.Errorf("%s has no MemStats lines", c.name)
		}
	}
	stop, err := StartCPU(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartCPU(filepath.Join(dir, "cpu2.pprof")); err == nil || !strings.Contains(err.Error(), "cpu2.pprof") {
		t.Errorf("a second CPU profile: %v", err)
	}
	stop()
	if fi, err := os.Stat(filepath.Join(dir, "cpu.pprof")); err != nil || fi.Size() == 0 {
		t.Errorf("cpu.pprof: %v", err)
	}
	gone := filepath.Join(dir, "no", "such", "heap.pprof")
	if err := WriteHeap(gone); err == nil || !strings.Contains(err.Error(), "heap profile") {
		t.Errorf("WriteHeap(%s) = %v", gone, err)
	}
	if _, err := StartCPU(gone); err == nil || !strings.Contains(err.Error(), "cpu profile") {
		t.Errorf("StartCPU(%s) = %v", gone, err)
	}
}
