// Package gcpolicy sets the Go garbage collector up for each kind of
// fgtop process: a one-shot scan, a seek or query over the record, and
// the SSH server. Each figure was measured (BENCHMARKS.md); a GOGC or
// GOMEMLIMIT in the environment always wins over them.
package gcpolicy

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/fgtop/fgtop/internal/hugeheap"
)

// userSet reports whether the user set the collector in the environment.
func userSet() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

// OneShotHeap is the memory (the runtime's, as debug.SetMemoryLimit counts
// it) a one-shot snapshot may grow to before its first collection. A scan
// of 10,000 kernels with a recovery.json each allocates about 31 MB (3 KB
// a kernel) of which it keeps about 17 MB; at 40 MiB the runtime's own
// overhead made that scan collect once, just before it ended (≈ 6 ms of
// CPU and write barriers for nothing). At 44 MiB neither 10,000-kernel tree
// of bench/mktree collects, and the process peaks at 47-50 / 52-55 MiB RSS
// without / with records (scanbench; the design's ≤ 64 MiB); a larger tree
// collects, and from then on runs the default policy.
const OneShotHeap = 44 << 20

// OneShot sets the collector up for a process that scans once, prints and
// exits: no collection until the heap reaches OneShotHeap, then the
// default policy (GOGC=100, no limit) from the first collection on, so a
// tree larger than that costs what it always did and a heap that lives
// beyond the limit can never make the collector run back to back. The
// live commands (console, watch, --follow, serve) never call it: they
// keep the default policy.
func OneShot() {
	if userSet() {
		return
	}
	untilFirstCollection(OneShotHeap, func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

// untilFirstCollection turns the collector off below limit, and calls
// then after the first collection, whatever triggered it.
func untilFirstCollection(limit int64, then func()) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	// The cleanup of an object nobody holds runs after the first
	// collection.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(struct{}) { then() }, struct{}{})
}

// QueryPercent and QueryLimit are Query's policy.
const (
	QueryPercent = 400
	QueryLimit   = 768 << 20
)

// Query trades memory for time in a one-shot query of the record, which
// builds a large state once and exits: the collector runs a quarter as
// often, under a ceiling that keeps a week's query within 768 MiB of
// heap. Each of GOGC and GOMEMLIMIT from the environment wins for itself.
func Query() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(QueryPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(QueryLimit)
	}
}

// SeekHeap is the heap a seek grows to before its first collection:
// `snapshot --at` on the 10,000-kernel week allocates about 170 MiB in
// all, so it never collects, where the collector ran two or three times
// at GOGC 400 for the same peak (about a tenth of its CPU).
const SeekHeap = 512 << 20

// Seek sets the collector up for `snapshot --at`, which builds one
// snapshot and exits: no collection until the heap reaches SeekHeap, then
// Query's policy from the first collection on, so a record too large for
// that costs what it did before. With GOGC or GOMEMLIMIT in the
// environment it is Query.
func Seek() {
	if userSet() {
		Query()
		return
	}
	untilFirstCollection(SeekHeap, Query)
}

// queryHeapTimes is how many times the record's size on disk is readied
// for a query's heap: `plan --replay 7d` on the 10,000-kernel bench week
// (72.7 MiB of segments) peaks at 0.6–0.7 GB of RSS, `history --device`
// at 0.57, and the heap's allocations scatter past its peak: at 10 times
// the part past it faulted small pages again (0.5–1.1 s of system time
// against 0.15 s at 16). Only what the heap touches is backed.
const queryHeapTimes = 16

// PrepareQueryHeap readies the heap a one-shot query over a record of
// recordSize bytes is about to grow (hugeheap.Prepare): a third of `plan
// --replay 7d`'s CPU on the bench week was the kernel's faults of fresh
// 4 KiB pages.
func PrepareQueryHeap(recordSize int64) { hugeheap.Prepare(queryHeapTimes * recordSize) }

// ReadDone collects once where a one-shot query has built its answer's
// input and dropped the scaffolding of the read: `plan --replay 7d` on the
// bench week holds about 370 MB of heap there of which 113 MB stay live,
// and the run that follows, left to the default policy, grew the heap into
// about 200 MB of fresh pages (each a fault the kernel zeroes, the
// largest part of the command's system time) before the collector took
// back the read's. The collection costs about 20 ms, its live heap being
// small. A GOGC or GOMEMLIMIT in the environment wins: then nothing is
// done.
func ReadDone() {
	if userSet() {
		return
	}
	runtime.GC()
}

// ServeHeap is serve's soft memory limit (debug.SetMemoryLimit: the Go
// runtime's own memory, not the binary's pages). Without one, sessions
// dropped under attack left their frames to a collector that runs only
// when the heap doubles: two rounds of issue 23's hostages (six viewers at
// 500x200 flooding resizes, three admitted), the second starting as soon
// as the first was dropped, peaked at 336-353 MB RSS against the 300 MB
// the attack may cost (TestServeHostageBinary); with this limit 272-273
// MB at 256 MiB and 223-225 MB at 200 MiB. Past it the collector runs
// more often (at most about half a core, the runtime's own cap), nothing
// fails.
const ServeHeap = 192 << 20

// Serve sets ServeHeap for the serve process and returns what restores
// the limit before it. A GOGC or GOMEMLIMIT in the environment wins: then
// nothing is changed.
func Serve() (restore func()) {
	if userSet() {
		return func() {}
	}
	prev := debug.SetMemoryLimit(ServeHeap)
	return func() { debug.SetMemoryLimit(prev) }
}
