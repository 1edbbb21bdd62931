package engine

import (
	"fmt"
	"testing"

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
// recording adds ≤ 5 % per change).
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
