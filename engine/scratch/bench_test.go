package scratch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const benchKernels = 10_000

// benchTree is a scratch root with benchKernels kernels, each with a ~3 KB
// resource.txt shaped like a real one, built once per test binary run.
var benchTree struct {
	once  sync.Once
	root  string
	paths []string
	err   error
}

// benchResource returns a resource.txt of about 3 KB for kernel id.
func benchResource(id string) string {
	var b strings.Builder
	b.WriteString("SCRATCH_SIZE=0m\nMOUNTS=")
	b.WriteString("/var/lib/backend.ai/scratches/" + id + "/config:/home/config:ro,")
	b.WriteString("/var/lib/backend.ai/scratches/" + id + "/work:/home/work:rw,")
	for i := 0; b.Len() < 2400; i++ {
		fmt.Fprintf(&b, "/opt/backend.ai/venv/lib/python3.13/site-packages/ai/backend/runner/tool%02d.x86_64.bin:/opt/kernel/tool%02d:ro,", i, i)
	}
	b.WriteString("/etc/localtime:/etc/localtime:ro\n")
	b.WriteString(`SLOTS={"cpu":"4","mem":"17179869184","cuda.shares":"1.2"}` + "\n")
	b.WriteString("UNIFIED_DEVICES=[]\n")
	b.WriteString("CUDA.SHARES_SHARES=GPU-2d02:0.60,GPU-2d03:0.60\nCPU_SHARES=0:1,1:1,16:1,17:1\nMEM_SHARES=root:16g\n")
	b.WriteString("CUDA_GLOBAL_DEVICE_IDS=0:GPU-2d02,1:GPU-2d03\nCUDA_RESOURCE_VIRTUALIZED=1\n")
	b.WriteString("CUDA_MEMORY_LIMITS=GPU-2d02:25769803776,GPU-2d03:25769803776\nCUDA_PROCESSOR_LIMITS=GPU-2d02:64,GPU-2d03:64\n")
	b.WriteString("CUDA_RESERVED_MEMORY=67108864\n")
	b.WriteString("CID=" + strings.Repeat("ab", 32) + "\n")
	return b.String()
}

func benchSetup(b testing.TB) (string, []string) {
	b.Helper()
	benchTree.once.Do(func() {
		dir, err := os.MkdirTemp("", "scratch-bench-")
		if err != nil {
			benchTree.err = err
			return
		}
		benchTree.root = dir
		for i := range benchKernels {
			id := kid(i)
			cfg := filepath.Join(dir, id, "config")
			if err := os.MkdirAll(cfg, 0o755); err != nil {
				benchTree.err = err
				return
			}
			// The other files an agent leaves there, so directories look real.
			os.MkdirAll(filepath.Join(dir, id, "work"), 0o755)
			p := filepath.Join(cfg, "resource.txt")
			if err := os.WriteFile(p, []byte(benchResource(id)), 0o644); err != nil {
				benchTree.err = err
				return
			}
			benchTree.paths = append(benchTree.paths, p)
		}
	})
	if benchTree.err != nil {
		b.Fatal(benchTree.err)
	}
	return benchTree.root, benchTree.paths
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchTree.root != "" {
		os.RemoveAll(benchTree.root)
	}
	os.Exit(code)
}

// countBytes is the benchmark's trivial parser.
func countBytes(_ string, data []byte) (int, error) { return len(data), nil }

// BenchmarkScan10k is the full initial scan of 10,000 kernels: listing,
// parallel open/fstat/read/close with symlink refusal, parse, events.
func BenchmarkScan10k(b *testing.B) {
	root, _ := benchSetup(b)
	roots := []Root{{Path: root, Agent: "a"}}
	measure(b, func() {
		if evs := Scan(context.Background(), roots, countBytes, 0); len(evs) != benchKernels+1 {
			b.Fatalf("%d events", len(evs))
		}
	})
}

// readFloor is the floor: GOMAXPROCS goroutines doing nothing but
// open/read/close of the files, paths known in advance (NUL-terminated
// already), one reused buffer per goroutine, no parsing, no results.
func readFloor(paths [][]byte) int64 {
	var next, total atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			var n int64
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					break
				}
				fd, err := openRaw(paths[i])
				if err != nil {
					panic(err)
				}
				for {
					m, err := syscall.Read(fd, buf)
					if err == syscall.EINTR {
						continue
					}
					if err != nil {
						panic(err)
					}
					n += int64(m)
					if m < len(buf) { // the files are smaller than buf: one read
						break
					}
				}
				syscall.Close(fd)
			}
			total.Add(n)
		})
	}
	wg.Wait()
	return total.Load()
}

// nulPaths makes NUL-terminated copies of the paths, so the floor does not
// copy a path per open.
func nulPaths(paths []string) [][]byte {
	out := make([][]byte, len(paths))
	for i, p := range paths {
		out[i] = append([]byte(p), 0)
	}
	return out
}

// cpuTime is the process's user+system CPU time so far: on a shared
// machine it varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs fn b.N times and reports wall and CPU milliseconds per run.
func measure(b *testing.B, fn func()) {
	fn() // warm the page cache and the buffer pool
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		fn()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/scan")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1e6, "cpu-ms/scan")
}

// BenchmarkReadOnly10k is the floor BenchmarkScan10k is held to (≤ 1.5×).
func BenchmarkReadOnly10k(b *testing.B) {
	_, paths := benchSetup(b)
	pathz := nulPaths(paths)
	measure(b, func() {
		if readFloor(pathz) == 0 {
			b.Fatal("nothing read")
		}
	})
}

// BenchmarkScanOverFloor10k runs the floor and the scan alternately, so
// both see the same machine load, and reports scan/floor ratios of wall
// and CPU time (the median and the best of the runs).
func BenchmarkScanOverFloor10k(b *testing.B) {
	root, paths := benchSetup(b)
	roots := []Root{{Path: root}}
	pathz := nulPaths(paths)
	readFloor(pathz)
	Scan(context.Background(), roots, countBytes, 0)
	var wall, cpu []float64
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
		w0, c0 := time.Now(), cpuTime()
		readFloor(pathz)
		w1, c1 := time.Now(), cpuTime()
		Scan(context.Background(), roots, countBytes, 0)
		w2, c2 := time.Now(), cpuTime()
		wall = append(wall, float64(w2.Sub(w1))/float64(w1.Sub(w0)))
		cpu = append(cpu, float64(c2-c1)/float64(c1-c0))
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	b.ReportMetric(wall[len(wall)/2], "wall-ratio-median")
	b.ReportMetric(wall[0], "wall-ratio-best")
	b.ReportMetric(cpu[len(cpu)/2], "cpu-ratio-median")
	b.ReportMetric(cpu[0], "cpu-ratio-best")
}

// BenchmarkOSReadFile10k is for comparison: os.ReadFile per file, parallel.
func BenchmarkOSReadFile10k(b *testing.B) {
	_, paths := benchSetup(b)
	measure(b, func() {
		runPool(context.Background(), len(paths), runtime.GOMAXPROCS(0), func(i int) {
			if _, err := os.ReadFile(paths[i]); err != nil {
				panic(err)
			}
		})
	})
}

// BenchmarkWatcherStart10k is the watcher's start: first-batch-ms until
// the initial reads are sent, armed-ms until every kernel is watched and
// checked again (the second batch), stop-ms for Run to return after cancel
// (closing an inotify instance with 10,000 watches).
func BenchmarkWatcherStart10k(b *testing.B) {
	root, _ := benchSetup(b)
	var first, armed, stop time.Duration
	for b.Loop() {
		start := time.Now()
		w, err := NewWatcher([]Root{{Path: root}}, countBytes, Options{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan []Event[int])
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx, out) }()
		if evs := <-out; len(evs) != benchKernels+1 {
			b.Fatalf("%d events", len(evs))
		}
		first += time.Since(start)
		if evs := <-out; len(evs) != 1 || evs[0].Kind != Resynced {
			b.Fatalf("second batch: %d events", len(evs))
		}
		armed += time.Since(start)
		t := time.Now()
		cancel()
		<-done
		stop += time.Since(t)
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / 1e6 }
	b.ReportMetric(per(first), "first-batch-ms")
	b.ReportMetric(per(armed), "armed-ms")
	b.ReportMetric(per(stop), "stop-ms")
}
