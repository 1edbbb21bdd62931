package resourcefile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

func splitFixture(b *testing.B) []byte {
	data, err := os.ReadFile(filepath.Join(fixturesDir(b), "backendai", "resource.cuda-shares-split.txt"))
	if err != nil {
		b.Skipf("fixture: %v", err)
	}
	return data
}

// BenchmarkParseFixture parses the split-share sample (about 3 KB, one long
// MOUNTS line), the file fgtop reads 10,000 of at start-up.
func BenchmarkParseFixture(b *testing.B) {
	data := splitFixture(b)
	types := model.DefaultSlotTypes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, types); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseFixtureFiguresOnly is BenchmarkParseFixture for a caller
// that needs only the figures (the engine's start-up scan).
func BenchmarkParseFixtureFiguresOnly(b *testing.B) {
	data := splitFixture(b)
	types := model.DefaultSlotTypes()
	opts := ParseOptions{FiguresOnly: true}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := opts.Parse(data, types); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFormatFixture formats the parsed split-share sample.
func BenchmarkFormatFixture(b *testing.B) {
	spec, err := Parse(splitFixture(b), model.DefaultSlotTypes())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		spec.Format()
	}
}

// BenchmarkScan compares reading N copies of the sample (open, read into
// a reused buffer, close: what the scratch scanner does) with reading and
// parsing them, on GOMAXPROCS workers. The start-up target is that
// "read+parse" costs at most 1.5× "read". Both report CPU time per file.
func BenchmarkScan(b *testing.B) {
	data := splitFixture(b)
	const n = 10000
	dir := b.TempDir()
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("k%05d.txt", i))
		if err := os.WriteFile(paths[i], data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	types := model.DefaultSlotTypes()
	run := func(b *testing.B, parse bool, opts ParseOptions) {
		b.ReportAllocs()
		var cpu time.Duration
		for b.Loop() {
			runtime.GC()
			c0 := cpuTime()
			var next atomic.Int64
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) {
				wg.Go(func() {
					buf := make([]byte, 8<<10)
					for {
						i := next.Add(1) - 1
						if i >= n {
							return
						}
						f, err := os.Open(paths[i])
						if err != nil {
							b.Error(err)
							return
						}
						m, err := io.ReadFull(f, buf)
						f.Close()
						if err != io.ErrUnexpectedEOF {
							b.Error(err)
							return
						}
						if parse {
							if _, err := opts.Parse(buf[:m], types); err != nil {
								b.Error(err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			cpu += cpuTime() - c0
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "wall-ns/file")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/n, "cpu-ns/file")
	}
	b.Run("read", func(b *testing.B) { run(b, false, ParseOptions{}) })
	b.Run("read+parse", func(b *testing.B) { run(b, true, ParseOptions{}) })
	b.Run("read+parse-figures", func(b *testing.B) { run(b, true, ParseOptions{FiguresOnly: true}) })
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
