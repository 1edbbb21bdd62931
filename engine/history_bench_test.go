package engine

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// BenchmarkUpdateRecorded is BenchmarkUpdate at 10,000 kernels with a
// history recorder following every snapshot, written once per change (a
// node with one change a second flushes each one on its own): mode=off is
// the engine alone, mode=recorded the engine and the recorder writing each
// change, mode=batched the recorder writing once per 1,000 changes (a busy
// node, still one write a second), in the same run (BENCHMARKS.md:
// recording adds ≤ 5 % per change). Its process CPU moves by more from run
// to run on a shared machine than recording costs: BenchmarkRecordingShare
// measures the recorder's part by the thread's clock.
func BenchmarkUpdateRecorded(b *testing.B) {
	const n = 10000
	for _, mode := range []string{"off", "recorded", "batched"} {
		b.Run("mode="+mode, func(b *testing.B) {
			st, specs := loadedState(b, n)
			var rec *history.Recorder
			if mode != "off" {
				var err error
				rec, err = history.Open(history.Options{Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				defer rec.Close()
				rec.Observe(st.snapshot())
				rec.Flush()
			}
			turn := make([]uint8, n)
			b.ReportAllocs()
			b.ResetTimer()
			defer testfix.CPUClock(b)()
			for i := 0; i < b.N; i++ {
				j := (i * 7919) % n
				turn[j] ^= 1
				id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", j))
				st.upsertKernel(kernelRead{root: "/r", id: id, path: "/r/x", spec: specs[turn[j]], rec: benchRecord, recKnown: true})
				s := st.snapshot()
				if rec != nil {
					rec.Observe(s)
					// recorded: a write per change (one change a second);
					// batched: a write per 1,000 (a busy node: one a second).
					if mode == "recorded" || i%1000 == 999 {
						rec.Flush()
					}
				}
			}
		})
	}
}

// BenchmarkRecordingShare splits each change's CPU between the engine and
// a history recorder writing every change on its own (a node with one
// change a second), by the thread's own CPU clock around each part, so
// that what other processes do to a shared machine, which moves
// BenchmarkUpdateRecorded's figures by ±10 % from run to run, mostly
// cancels out. It reports the engine's part (engine-thread-ns/op), the
// recorder's (Observe and Flush, write(2) included: recorder-thread-ns/op)
// and the one as a share of the other (recorder-%). The collector's
// background work is on other threads and not in either part: the
// recorder allocates next to nothing per change (B/op, allocs/op), while
// the engine's share of it is in BenchmarkUpdateRecorded's cpu-ns/op. The
// clock's own cost (a system call a reading) is measured and taken off.
func BenchmarkRecordingShare(b *testing.B) {
	const n = 10000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st, specs := loadedState(b, n)
	rec, err := history.Open(history.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	rec.Observe(st.snapshot())
	rec.Flush()
	turn := make([]uint8, n)
	var eng, recd, clock time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := threadCPU()
		j := (i * 7919) % n
		turn[j] ^= 1
		id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", j))
		st.upsertKernel(kernelRead{root: "/r", id: id, path: "/r/x", spec: specs[turn[j]], rec: benchRecord, recKnown: true})
		s := st.snapshot()
		t1 := threadCPU()
		rec.Observe(s)
		rec.Flush()
		t2 := threadCPU()
		t3 := threadCPU()
		eng += t1 - t0
		recd += t2 - t1
		clock += t3 - t2
	}
	b.StopTimer()
	e, r := float64(eng-clock)/float64(b.N), float64(recd-clock)/float64(b.N)
	b.ReportMetric(e, "engine-thread-ns/op")
	b.ReportMetric(r, "recorder-thread-ns/op")
	b.ReportMetric(100*r/e, "recorder-%")
}

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
