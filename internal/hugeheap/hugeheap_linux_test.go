package hugeheap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPrepareAdvises: the range Prepare gives back to the heap is, in the
// kernel's own account of the process (/proc/self/smaps), memory advised
// for huge pages (VmFlags hg), whatever the machine's setting; a size
// under a huge page advises nothing.
func TestPrepareAdvises(t *testing.T) {
	if b := budget(64<<20, totalRAM(t), readSmall("/proc/sys/vm/overcommit_memory"), readSmall("/sys/kernel/mm/transparent_hugepage/enabled")); b < 64<<20 {
		t.Skipf("this machine's budget for the advice is %d bytes (its memory, overcommit or huge page settings)", b)
	}
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
	in, seen, flags := false, false, false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := vmaRange(line); ok {
			in = lo < end && beg < hi
			continue
		}
		if strings.HasPrefix(line, "VmFlags:") {
			flags = true
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			seen = true
			if !strings.Contains(line, " hg") {
				return false
			}
		}
	}
	if !flags {
		t.Skip("/proc/self/smaps has no VmFlags lines (a kernel before 3.8)")
	}
	return seen
}

// totalRAM is the machine's memory in bytes.
func totalRAM(t *testing.T) int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Skipf("sysinfo: %v", err)
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// TestBudget: no mapping where the kernel counts it against a hard
// limit or gives no huge pages; a quarter of the memory at most.
func TestBudget(t *testing.T) {
	const g = 1 << 30
	for _, c := range []struct {
		n, total        int64
		overcommit, thp string
		want            int64
	}{
		{g, 16 * g, "0", "always [madvise] never", g},
		{g, 16 * g, "1", "[always] madvise never", g},
		{g, 16 * g, "2", "always [madvise] never", 0},
		{g, 16 * g, "0", "always madvise [never]", 0},
		{g, 2 * g, "0", "always [madvise] never", g / 2},
		{g, 0, "", "", g},
		{g, 16 * g, "", "garbled [", g},
	} {
		if got := budget(c.n, c.total, c.overcommit, c.thp); got != c.want {
			t.Errorf("budget(%d, %d, %q, %q) = %d, want %d", c.n, c.total, c.overcommit, c.thp, got, c.want)
		}
	}
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
