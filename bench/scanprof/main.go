// Command scanprof profiles the one-shot scan the way `fgtop snapshot
// --alloc-map` runs it (mock devices from the fixtures, one root), writing
// a CPU and a heap profile and printing the runtime's memory figures. With
// -live it starts the live engine on the root instead, waits for its
// initial scan, collects garbage and prints the heap the engine keeps and
// the process's RSS (the growth table's "live engine" memory).
//
//	go run ./bench/scanprof -root /tmp/s10k -cpu /tmp/cpu.prof -heap /tmp/heap.prof
//	go run ./bench/scanprof -root /tmp/s10k -live
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/engine/scratch"
)

func main() {
	root := flag.String("root", "", "scratch root")
	fx := flag.String("fixtures", "testdata/fixtures/backendai", "fixture directory (mock-accelerator.toml)")
	cpu := flag.String("cpu", "", "write a CPU profile here")
	heap := flag.String("heap", "", "write a heap profile (after the build) here")
	n := flag.Int("n", 1, "builds to run (the profile covers all)")
	live := flag.Bool("live", false, "measure a live engine's memory after its initial scan")
	flag.Parse()
	src, err := inventory.Open(*fx+"/mock-accelerator.toml", inventory.OpenOptions{MockEtcdPath: *fx + "/mock-accelerator.etcd.json"})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	opts := engine.Options{Roots: []scratch.Root{{Path: *root, Agent: "a"}}, Inventory: src}
	if *live {
		liveMemory(opts)
		return
	}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *heap != "" {
		runtime.MemProfileRate = 4096
	}
	for i := 0; i < *n; i++ {
		t := time.Now()
		s, err := engine.Build(context.Background(), opts)
		if err != nil {
			log.Fatal(err)
		}
		d := time.Since(t)
		t = time.Now()
		b, _ := report.Marshal(report.AllocMap(s), true)
		dm := time.Since(t)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(os.Stderr, "build %v, alloc map %v: %d kernels, %d bytes out; heap in use %.1f MiB, sys %.1f MiB, %d GCs\n",
			d, dm, s.NumKernels(), len(b), float64(ms.HeapInuse)/(1<<20), float64(ms.Sys)/(1<<20), ms.NumGC)
		if *heap != "" && i == *n-1 {
			f, err := os.Create(*heap)
			if err != nil {
				log.Fatal(err)
			}
			runtime.GC()
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		runtime.KeepAlive(s)
	}
}

// liveMemory runs the live engine until its initial scan is published,
// then reports its heap and the process's RSS after a collection.
func liveMemory(opts engine.Options) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng := engine.New(opts)
	errc := make(chan error, 1)
	t := time.Now()
	go func() { errc <- eng.Run(ctx) }()
	select {
	case <-eng.Ready():
	case err := <-errc:
		log.Fatal(err)
	}
	d := time.Since(t)
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("live engine: %d kernels ready in %v; heap in use %.1f MiB (live objects %.1f MiB); RSS %s, peak %s\n",
		eng.Latest().NumKernels(), d.Round(time.Millisecond), float64(ms.HeapInuse)/(1<<20), float64(ms.HeapAlloc)/(1<<20),
		procStatus("VmRSS"), procStatus("VmHWM"))
}

// procStatus returns a field of /proc/self/status ("12345 kB"), or "?".
func procStatus(field string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte(field+":")); ok {
			return string(bytes.TrimSpace(v))
		}
	}
	return "?"
}
