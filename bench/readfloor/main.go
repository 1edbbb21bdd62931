// Command readfloor is the floor for the scan benchmark: a minimal parallel
// reader that lists a scratch root and reads every kernel's
// config/resource.txt, doing nothing with the bytes but counting them.
//
//	go run ./bench/readfloor DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readfloor SCRATCH-ROOT")
		os.Exit(2)
	}
	root := os.Args[1]
	ents, err := os.ReadDir(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var total, files atomic.Int64
	jobs := make(chan string, 256)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range jobs {
				b, err := os.ReadFile(filepath.Join(root, name, "config", "resource.txt"))
				if err == nil {
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
	fmt.Printf("%d files, %d bytes\n", files.Load(), total.Load())
}
