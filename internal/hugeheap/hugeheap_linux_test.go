package hugeheap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPrepareAdvises: the range Prepare gives back to the heap is, in the
// kernel's own account of the process (/proc/self/smaps), memory advised
// for huge pages (VmFlags hg), whatever the machine's setting; a size
// under a huge page advises nothing.
func TestPrepareAdvises(t *testing.T) {
	beg, end, err := prepare(64 << 20)
	if err != nil {
		t.Skipf("the kernel refuses the advice (%v): no transparent huge pages here", err)
	}
	if end-beg < 60<<20 || beg%hugePage != 0 {
		t.Fatalf("advised [%#x, %#x): want 2 MiB-aligned and about 64 MiB", beg, end)
	}
	if !advised(t, beg, end) {
		t.Fatalf("[%#x, %#x) is not advised for huge pages in /proc/self/smaps", beg, end)
	}
	if b, e, _ := prepare(hugePage - 1); b != 0 || e != 0 {
		t.Fatalf("under a huge page: advised [%#x, %#x)", b, e)
	}
}

// advised reports whether every mapping of /proc/self/smaps that
// overlaps [beg, end) carries the hg flag, and some does.
func advised(t *testing.T, beg, end uintptr) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	in, seen := false, false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := vmaRange(line); ok {
			in = lo < end && beg < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			seen = true
			if !strings.Contains(line, " hg") {
				return false
			}
		}
	}
	return seen
}

// vmaRange parses a mapping's first line ("lo-hi perms ...").
func vmaRange(line string) (lo, hi uintptr, ok bool) {
	addr, _, found := strings.Cut(line, " ")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(addr, "-")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}
