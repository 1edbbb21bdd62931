// Command readfloor is the floor for the scan benchmark: a minimal parallel
// reader that lists a scratch root and reads the files of every kernel's
// config directory that fgtop's first scan must read, doing nothing with
// the bytes but counting them.
//
// By default that is config/resource.txt and config/recovery.json: the
// engine attributes every kernel to an agent by its recovery record, as
// Backend.AI does, so it opens recovery.json for every kernel, and where
// there is none the failed open is part of the cost (attribution must
// look). -resource-only reads resource.txt alone: the floor of BENCHMARKS.md
// before attribution by record (issue 12), kept for comparison.
//
//	go run ./bench/readfloor DIR
//	go run ./bench/readfloor -resource-only DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

func main() {
	resourceOnly := flag.Bool("resource-only", false, "read resource.txt only (the floor before recovery.json attribution)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: readfloor [-resource-only] SCRATCH-ROOT")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	root := flag.Arg(0)
	names := []string{"resource.txt", "recovery.json"}
	if *resourceOnly {
		names = names[:1]
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var total, files, absent atomic.Int64
	jobs := make(chan string, 256)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for kid := range jobs {
				for _, name := range names {
					b, err := os.ReadFile(filepath.Join(root, kid, "config", name))
					if err != nil {
						absent.Add(1)
						continue
					}
					total.Add(int64(len(b)))
					files.Add(1)
				}
			}
		}()
	}
	for _, e := range ents {
		jobs <- e.Name()
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("%d files, %d bytes, %d failed opens\n", files.Load(), total.Load(), absent.Load())
}
