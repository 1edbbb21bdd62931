package hugeheap

import (
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// prepare maps n bytes (within budget) as the heap does when it grows,
// without touching them (a large allocation takes fresh zeroed pages
// from the kernel), advises them for huge pages, and gives them back to
// the heap: its next allocations take them first (the runtime's page
// allocator takes the lowest free addresses), and each first touch then
// faults a huge page. It returns the range advised.
func prepare(n int64) (beg, end uintptr, err error) {
	var total int64
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	n = budget(n, total, readSmall("/proc/sys/vm/overcommit_memory"), readSmall("/sys/kernel/mm/transparent_hugepage/enabled"))
	if n < hugePage {
		return 0, 0, nil
	}
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg = (p + hugePage - 1) &^ (hugePage - 1)
	end = (p + uintptr(n)) &^ (hugePage - 1)
	if end > beg {
		err = unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE)
	}
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
	return beg, end, err
}

// budget is how much of n bytes prepare maps: none where the kernel
// counts every mapping against a hard limit (overcommit_memory 2: a
// mapping it refuses is a fatal out-of-memory in the runtime, not an
// error, and a gigabyte reserved would be a gigabyte other processes
// cannot have) or gives no transparent huge pages at all ("[never]");
// else at most a quarter of the machine's memory (total, 0: unknown).
func budget(n, total int64, overcommit, thp string) int64 {
	if overcommit == "2" || thpSetting(thp) == "never" {
		return 0
	}
	if total > 0 && n > total/4 {
		n = total / 4
	}
	return n
}

// thpSetting is the bracketed choice of a transparent_hugepage/enabled
// file ("always [madvise] never": madvise); "" where there is none.
func thpSetting(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '[' {
			for j := i + 1; j < len(s); j++ {
				if s[j] == ']' {
					return s[i+1 : j]
				}
			}
		}
	}
	return ""
}

// readSmall is a small file of the kernel's, its spaces trimmed at the
// ends; "" where it cannot be read.
func readSmall(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	for n > 0 && (buf[n-1] == '\n' || buf[n-1] == ' ') {
		n--
	}
	i := 0
	for i < n && buf[i] == ' ' {
		i++
	}
	return string(buf[i:n])
}
