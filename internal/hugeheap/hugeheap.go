// Package hugeheap readies the heap a one-shot query is about to grow to
// be backed by transparent huge pages.
//
// A query over a week of the record (`plan --replay`, `history`) builds a
// heap of several hundred megabytes once and exits. On a virtual machine
// each first touch of a 4 KiB page is a fault of about 10 µs: 170,000 of
// them were a third of `plan --replay 7d`'s CPU on the 10,000-kernel bench
// week (BENCHMARKS.md). Where the kernel gives huge pages only to memory
// that asks for them (transparent_hugepage set to madvise, as on Ubuntu
// and on this project's machines), the Go runtime does not ask for the
// heap; Prepare does, for the part of the address space the heap grows
// into next. It is for processes that exit after one answer: a long-lived
// one (the console, serve) keeps the runtime's own choice.
package hugeheap

import (
	"os"
	"strings"
)

// hugePage is the size of a transparent huge page on the platforms that
// have them (x86-64, arm64 with 4 KiB pages).
const hugePage = 2 << 20

// Prepare asks the kernel to back the next n bytes the heap grows into
// with huge pages, within a quarter of the machine's memory. It does
// nothing where the platform has no such advice, where GODEBUG sets
// disablethp=1 (the runtime's own switch for them), where the kernel
// gives no transparent huge pages or refuses to overcommit memory
// (vm.overcommit_memory 2: the mapping would count against the limit,
// and one refused is fatal to the runtime), or for n under a huge page; an error of the kernel's is not the query's, and is
// dropped: the query then runs as it would have.
func Prepare(n int64) {
	if n < hugePage || thpDisabled(os.Getenv("GODEBUG")) {
		return
	}
	_, _, _ = prepare(n)
}

// thpDisabled reports whether godebug sets disablethp=1 (the last
// setting wins, as the runtime reads it).
func thpDisabled(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "disablethp="); ok {
			off = v == "1"
		}
	}
	return off
}
