package hugeheap

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// prepare maps n bytes (at most a quarter of the machine's memory) as the
// heap does when it grows, without touching them (a large allocation
// takes fresh zeroed pages from the kernel), advises them for huge
// pages, and gives them back to the heap: its next allocations take them
// first (the runtime's page allocator takes the lowest free addresses),
// and each first touch then faults a huge page. It returns the range
// advised.
func prepare(n int64) (beg, end uintptr, err error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil {
		total := int64(si.Totalram) * int64(si.Unit)
		if total > 0 && n > total/4 {
			n = total / 4
		}
	}
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
