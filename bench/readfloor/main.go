// Command readfloor is the floor for the scan benchmark: a minimal parallel
// reader that lists a scratch root and reads the files of every kernel's
// config directory that fgtop's first scan must read, doing nothing with
// the bytes but counting them.
//
// By default that is config/resource.txt and config/recovery.json: the
// engine attributes every kernel to an agent by its recovery record, as
// Backend.AI does, so it opens recovery.json for every kernel, and where
// there is none the failed open is part of the cost (attribution must
// look). -resource-only reads resource.txt alone (the floor before
// attribution by record, issue 12).
//
// Each file is read with the fewest system calls a reader can make: an
// openat relative to the root's descriptor, one read into a buffer the
// worker reuses, a close (a read shorter than the buffer is the end, as in
// fgtop's own reader). -readfile reads with os.ReadFile instead (an
// absolute open, an fstat, a read to EOF into a fresh buffer: five calls
// and an allocation per file), which is the floor BENCHMARKS.md used up to
// 2026-11-25; -readfile -resource-only is that floor exactly.
//
//	go run ./bench/readfloor DIR
//	go run ./bench/readfloor -readfile -resource-only DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
)

func main() {
	resourceOnly := flag.Bool("resource-only", false, "read resource.txt only (the floor before recovery.json attribution)")
	readFile := flag.Bool("readfile", false, "read each file with os.ReadFile (the floor used before 2026-11-25)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: readfloor [-resource-only] [-readfile] SCRATCH-ROOT")
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
	dir, err := os.Open(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kids, err := dir.Readdirnames(-1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dirfd := int(dir.Fd())
	var total, files, absent atomic.Int64
	jobs := make(chan string, 256)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for kid := range jobs {
				for _, name := range names {
					var n int
					var err error
					if *readFile {
						var b []byte
						b, err = os.ReadFile(filepath.Join(root, kid, "config", name))
						n = len(b)
					} else {
						n, err = readAt(dirfd, kid+"/config/"+name, buf)
					}
					if err != nil {
						absent.Add(1)
						continue
					}
					total.Add(int64(n))
					files.Add(1)
				}
			}
		}()
	}
	for _, kid := range kids {
		jobs <- kid
	}
	close(jobs)
	wg.Wait()
	runtime.KeepAlive(dir)
	fmt.Printf("%d files, %d bytes, %d failed opens\n", files.Load(), total.Load(), absent.Load())
}

// readAt reads rel below dirfd into buf: openat, read until a short read,
// close.
func readAt(dirfd int, rel string, buf []byte) (int, error) {
	fd, err := syscall.Openat(dirfd, rel, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	total := 0
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		total += n
		if n < len(buf) {
			return total, nil
		}
	}
}
