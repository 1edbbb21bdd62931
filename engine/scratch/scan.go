package scratch

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fgtop/fgtop/model"
)

// Scan reads and parses every kernel's resource.txt under the roots, with
// workers goroutines reading and parsing in parallel (GOMAXPROCS when
// workers ≤ 0), and returns what it found.
//
// The order is deterministic: root by root in the order given; within a
// root, root-level events first, then kernel events by kernel id, then a
// Resynced event listing the kernels present. A missing root gives one
// RootMissing event (no Resynced); a root that cannot be listed, a Problem.
// If ctx is cancelled, Scan stops early and returns what it has, without
// Resynced for roots it did not finish.
func Scan[T any](ctx context.Context, roots []Root, parse ParseFunc[T], workers int) []Event[T] {
	s := &scanner[T]{parse: parse, workers: workers}
	targets := make([]*scanTarget[T], len(roots))
	for i, r := range roots {
		targets[i] = &scanTarget[T]{root: r, path: cleanRoot(r.Path)}
	}
	finished := s.stream(ctx, targets, nil, func(c *chunk[T], i int) {
		c.res[i] = s.readKernel(c.t.root, c.t.path, c.t.dir, c.kids[i], readOpts{})
	})
	n := 0
	for _, t := range targets {
		n += len(t.entries) + 1
	}
	out := make([]Event[T], 0, n)
	for _, t := range targets {
		out = t.appendEvents(out, finished)
		t.close()
	}
	return out
}

// ScanEach is Scan without collecting: each kernel's event is handed to
// emit as soon as its chunk of the listing is read and parsed, and dropped
// by the scanner after emit returns, so a caller that folds events into its
// own state never has more than a few chunks of parsed files in memory
// (Scan holds every parsed file until the end). It reads exactly what Scan
// reads, with the same checks (openat2 RESOLVE_BENEATH, symlinks reported
// and never followed) and the same events; only the order differs.
//
// emit is never called concurrently, but it may be called from any of the
// scan's goroutines. Kernel events come first, root by root in the order
// given, each root's in its listing order (the order a readdir, and so
// Backend.AI's own scan, meets them); then, root by root, the root-level
// event of a root that could not be listed (RootMissing or Problem) or,
// when the scan finished, the root's Resynced (Present in listing order).
// A root whose listing fails part-way keeps the kernel events already
// emitted. It reports whether the scan finished (false when ctx was
// cancelled: emit is not called again after it sees the cancellation, and
// no Resynced follows).
func ScanEach[T any](ctx context.Context, roots []Root, parse ParseFunc[T], workers int, emit func(Event[T])) bool {
	s := &scanner[T]{parse: parse, workers: workers}
	return s.scanEach(ctx, roots, emit)
}

// ScanEachWith is ScanEach that also reads each kernel's companion file
// (Companion) beside its resource.txt.
func ScanEachWith[T any](ctx context.Context, roots []Root, parse ParseFunc[T], comp Companion[T], workers int, emit func(Event[T])) bool {
	s := &scanner[T]{parse: parse, workers: workers, comp: comp}
	return s.scanEach(ctx, roots, emit)
}

func (s *scanner[T]) scanEach(ctx context.Context, roots []Root, emit func(Event[T])) bool {
	targets := make([]*scanTarget[T], len(roots))
	for i, r := range roots {
		targets[i] = &scanTarget[T]{root: r, path: cleanRoot(r.Path)}
	}
	o := &inOrder[T]{emit: func(c *chunk[T]) {
		t := c.t
		for i := range c.res {
			if ctx.Err() != nil {
				return
			}
			r := &c.res[i]
			if r.has {
				emit(r.ev)
			}
			if r.status != kGone {
				t.present = append(t.present, model.KernelID(c.kids[i]))
			}
		}
		// The parsed values are the caller's now: let them go with the
		// caller's state, not with the chunk, whose results array serves
		// a chunk listed later (a scan holds a few at a time, not one per
		// 64 kernels of the root: 2 MB of fresh pages at 10,000).
		clear(c.res)
		s.spare.Put(c.res[:cap(c.res)])
		c.res = nil
	}}
	s.lazyResults = true
	finished := s.run(ctx, targets, o.add, func(c *chunk[T], i int) {
		if i == 0 {
			// Taken when a worker starts on the chunk, not when it is
			// listed: the listing runs far ahead of the reading.
			c.res = s.results(len(c.kids))
		}
		c.res[i] = s.readKernel(c.t.root, c.t.path, c.t.dir, c.kids[i], readOpts{})
	}, o.done)
	finished = finished && ctx.Err() == nil
	for _, t := range targets {
		switch {
		case ctx.Err() != nil:
		case t.listEv != nil:
			emit(*t.listEv)
		case finished:
			emit(Event[T]{Kind: Resynced, Root: t.root.Path, Agent: t.root.Agent, Path: t.path, Present: t.present})
		}
		t.close()
	}
	return finished
}

// inOrder hands finished chunks on in listing order, whichever goroutine
// finished them: a chunk done early waits for the ones listed before it.
// The goroutine that finishes the next chunk in line emits it and every
// waiting chunk after it; the others only mark theirs done and go back to
// reading, so emitting never holds up more than one reader.
type inOrder[T any] struct {
	emit func(*chunk[T])

	mu       sync.Mutex
	chunks   []*chunk[T] // in listing order
	finished []bool
	next     int  // the first chunk not emitted yet
	emitting bool // a goroutine is emitting; it will see newly finished chunks
}

// add registers a listed chunk (the lister calls it, in listing order,
// before any worker sees the chunk).
func (o *inOrder[T]) add(c *chunk[T]) {
	o.mu.Lock()
	c.seq = len(o.chunks)
	o.chunks = append(o.chunks, c)
	o.finished = append(o.finished, false)
	o.mu.Unlock()
}

// done marks c finished and emits whatever is now next in line.
func (o *inOrder[T]) done(c *chunk[T]) {
	o.mu.Lock()
	o.finished[c.seq] = true
	if o.emitting {
		o.mu.Unlock()
		return
	}
	o.emitting = true
	for o.next < len(o.chunks) && o.finished[o.next] {
		c := o.chunks[o.next]
		o.chunks[o.next] = nil
		o.next++
		o.mu.Unlock()
		o.emit(c)
		o.mu.Lock()
	}
	o.emitting = false
	o.mu.Unlock()
}

// cleanRoot is the form of a root path used in every path the package
// builds (and so in every Event.Path and fsnotify event name).
func cleanRoot(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// faultOp names an operation a test can make fail.
type faultOp int

const (
	faultList  faultOp = iota // listing a root
	faultRead                 // reading a kernel's resource.txt
	faultWatch                // adding an inotify watch
)

// faultFunc lets tests inject errors (permission denied while running as
// root, ENOSPC from inotify) into the real code paths. Nil in production.
type faultFunc func(op faultOp, path string) error

// scanner reads kernels; Scan and the Watcher share it.
type scanner[T any] struct {
	parse   ParseFunc[T]
	comp    Companion[T]
	workers int
	fault   faultFunc
	// spare holds results arrays ([]kernelResult[T], zeroed) that ScanEach
	// has emitted and no longer needs; with lazyResults, list leaves a
	// chunk's results for its worker to take.
	spare       sync.Pool
	lazyResults bool
}

// results returns a zeroed results array for n kernels.
func (s *scanner[T]) results(n int) []kernelResult[T] {
	if r, ok := s.spare.Get().([]kernelResult[T]); ok && cap(r) >= n {
		return r[:n]
	}
	return make([]kernelResult[T], n)
}

func (s *scanner[T]) nworkers() int {
	if s.workers > 0 {
		return s.workers
	}
	return runtime.GOMAXPROCS(0)
}

// kernelStatus is what a read learnt about a kernel's directories; the
// watcher chooses its watches from it.
type kernelStatus int

const (
	// kGone: no kernel here (the directory vanished, or is a symlink or not
	// a directory). The kernel is not present.
	kGone kernelStatus = iota
	// kNoConfig: the kernel directory exists; config/ does not (or is not a
	// real directory).
	kNoConfig
	// kConfig: config/ is a real directory.
	kConfig
)

// kernelResult is one kernel's outcome.
type kernelResult[T any] struct {
	status kernelStatus
	has    bool // ev is set
	ev     Event[T]
	hashed bool   // hash is set: the file was read
	hash   uint64 // of the file's content
	// watchErr is a failed inotify watch on watchPath (watcher only).
	watchErr  error
	watchPath string
}

// scanTarget is one root being scanned.
type scanTarget[T any] struct {
	root    Root
	path    string // cleaned
	dir     *rootDir
	listEv  *Event[T] // RootMissing or Problem when the root could not be listed
	missing bool      // the root does not exist
	chunks  []*chunk[T]
	// entries is every kernel listed, sorted by id; set when the scan is
	// over (not by ScanEach).
	entries []entry[T]
	// present is ScanEach's list of the kernels found, in listing order.
	present []model.KernelID
}

// chunk is a run of kernel ids from a root's listing, read by one worker.
type chunk[T any] struct {
	t    *scanTarget[T]
	kids []string
	ks   []*kstate // the watcher's state of each kernel; nil for Scan
	res  []kernelResult[T]
	seq  int // position in the listing (ScanEach only)
}

// entry is one kernel of a finished scan.
type entry[T any] struct {
	kid string
	res *kernelResult[T]
}

// listChunk is how many names are listed at a time: small enough that the
// workers start reading early and share the last chunks evenly, large
// enough that the hand-over costs nothing next to ~5µs of reading per file.
const listChunk = 64

// chunkQueue is how many listed chunks may wait for a worker: enough for
// 16,000 kernels, so the listing runs ahead at full speed.
const chunkQueue = 256

// stream lists the targets' roots and reads their kernels at the same
// time: the calling goroutine lists, in chunks, while workers read what is
// listed already; once the listing is done the caller reads too. On a
// 2-core machine this hides the listing (about a tenth of the reading
// cost at 10,000 kernels) behind the reads. prep, if set, runs on the
// calling goroutine for each chunk before any worker sees it. It reports
// whether every kernel was processed (false when ctx was cancelled). When
// it returns, every target's entries are sorted (finish).
func (s *scanner[T]) stream(ctx context.Context, targets []*scanTarget[T], prep func(*chunk[T]), fn func(*chunk[T], int)) bool {
	ok := s.run(ctx, targets, prep, fn, nil)
	for _, t := range targets {
		t.finish()
	}
	return ok
}

// run is stream without the final sort; after, if set, is called for each
// chunk once all its kernels are processed, on the goroutine that
// processed it (never for a chunk cut short by ctx).
func (s *scanner[T]) run(ctx context.Context, targets []*scanTarget[T], prep func(*chunk[T]), fn func(*chunk[T], int), after func(*chunk[T])) bool {
	done := ctx.Done()
	var stopped atomic.Bool
	process := func(c *chunk[T]) {
		for i := range c.kids {
			select {
			case <-done:
				stopped.Store(true)
				return
			default:
			}
			fn(c, i)
		}
		if after != nil {
			after(c)
		}
	}
	workers := s.nworkers()
	emit := process
	var ch chan *chunk[T]
	var wg sync.WaitGroup
	if workers > 1 {
		ch = make(chan *chunk[T], chunkQueue)
		for range workers - 1 {
			wg.Go(func() {
				for c := range ch {
					process(c)
				}
			})
		}
		emit = func(c *chunk[T]) {
			// The lister must not block: a parked lister leaves its core
			// idle. With the queue full, it reads the chunk itself.
			select {
			case ch <- c:
			default:
				process(c)
			}
		}
	}
	for _, t := range targets {
		s.list(t, func(c *chunk[T]) {
			if prep != nil {
				prep(c)
			}
			emit(c)
		})
	}
	if ch != nil {
		close(ch)
		for c := range ch {
			process(c)
		}
		wg.Wait()
	}
	return !stopped.Load() && ctx.Err() == nil
}

// list opens a root and hands its kernel ids out in chunks. Only UUID
// names are candidates; a name that is not a directory drops out when its
// read fails, a symlink becomes a Problem there.
func (s *scanner[T]) list(t *scanTarget[T], emit func(*chunk[T])) {
	var err error
	if s.fault != nil {
		err = s.fault(faultList, t.path)
	}
	if err == nil {
		t.dir, err = openRoot(t.path)
	}
	for err == nil {
		var names []string
		names, err = t.dir.readNames(listChunk)
		kids := names[:0]
		for _, name := range names {
			if isKernelID(name) {
				kids = append(kids, name)
			}
		}
		if len(kids) > 0 {
			c := &chunk[T]{t: t, kids: kids}
			if !s.lazyResults {
				c.res = s.results(len(kids))
			}
			t.chunks = append(t.chunks, c)
			emit(c)
		}
	}
	if err != io.EOF {
		t.listEv = rootListEvent[T](t.root, t.path, err)
		t.missing = t.listEv.Kind == RootMissing
	}
}

// finish sorts the target's kernels by id, which makes the result
// deterministic whatever the directory order and the workers did.
func (t *scanTarget[T]) finish() {
	n := 0
	for _, c := range t.chunks {
		n += len(c.kids)
	}
	t.entries = make([]entry[T], 0, n)
	for _, c := range t.chunks {
		for i, kid := range c.kids {
			t.entries = append(t.entries, entry[T]{kid: kid, res: &c.res[i]})
		}
	}
	slices.SortFunc(t.entries, func(a, b entry[T]) int { return strings.Compare(a.kid, b.kid) })
}

// unlistedKernels says what a root that cannot be listed leaves of its
// kernels. The scanner does not know whether any were seen before: "its
// kernels keep their last known figures" read, on a root unreadable from
// the start, as if the figures counted them.
const unlistedKernels = "fgtop cannot see its kernels: those it saw before keep their last known figures, any others are not counted (run fgtop as root or as the agent's user)"

// rootListEvent is the event for a root that cannot be listed.
func rootListEvent[T any](r Root, path string, err error) *Event[T] {
	ev := &Event[T]{Root: r.Path, Agent: r.Agent, Path: path}
	switch {
	case isMissing(err):
		ev.Kind = RootMissing
		ev.Issue = &model.Issue{Severity: model.SevError, Code: model.IssueRootMissing, File: path, Agent: r.Agent,
			Message: "scratch root does not exist (or is not a directory); watching for it to appear"}
	case isPermission(err):
		ev.Kind = Problem
		ev.Issue = &model.Issue{Severity: model.SevError, Code: model.IssuePermission, File: path, Agent: r.Agent,
			Message: fmt.Sprintf("cannot list the scratch root: %v; %s", err, unlistedKernels)}
	default:
		ev.Kind = Problem
		ev.Issue = &model.Issue{Severity: model.SevError, Code: model.IssueRootMissing, File: path, Agent: r.Agent,
			Message: fmt.Sprintf("cannot list the scratch root: %v", err)}
	}
	return ev
}

func (t *scanTarget[T]) close() {
	if t.dir != nil {
		t.dir.close()
		t.dir = nil
	}
}

// appendEvents appends the target's events in the documented order; with
// finished, the Resynced that closes a full scan.
func (t *scanTarget[T]) appendEvents(out []Event[T], finished bool) []Event[T] {
	if t.listEv != nil {
		return append(out, *t.listEv)
	}
	present := make([]model.KernelID, 0, len(t.entries))
	for _, e := range t.entries {
		if e.res.has {
			out = append(out, e.res.ev)
		}
		if e.res.status != kGone {
			present = append(present, model.KernelID(e.kid))
		}
	}
	if finished {
		out = append(out, Event[T]{Kind: Resynced, Root: t.root.Path, Agent: t.root.Agent, Path: t.path, Present: present})
	}
	return out
}

// runPool calls fn(0..n-1) on up to workers goroutines and reports whether
// it got through all of them (false when ctx was cancelled). Work is handed
// out by an atomic counter: per-item cost is a few nanoseconds, against
// microseconds per file.
func runPool(ctx context.Context, n, workers int, fn func(int)) bool {
	if workers > n {
		workers = n
	}
	done := ctx.Done()
	cancelled := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			if cancelled() {
				return false
			}
			fn(i)
		}
		return true
	}
	var next atomic.Int64
	var stopped atomic.Bool
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if cancelled() {
				stopped.Store(true)
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work() // the caller is the last worker
	wg.Wait()
	return !stopped.Load()
}

// readOpts says what a read should do beyond reading and parsing.
type readOpts struct {
	stat bool    // fstat for ModTime
	hash bool    // hash the content (the watcher compares it on rescans)
	prev *uint64 // hash of the last read: the same content is not parsed or reported
}

// hashSeed seeds the content hashes; they never leave the process.
var hashSeed = maphash.MakeSeed()

// readKernel reads and parses one kernel's file and says what it found.
func (s *scanner[T]) readKernel(r Root, rootPath string, rd *rootDir, kid string, o readOpts) kernelResult[T] {
	// One string serves as the event's path and, NUL-terminated, as the
	// relative path handed to the kernel.
	pathz := rootPath + "/" + kid + "/config/resource.txt\x00"
	path := pathz[:len(pathz)-1]
	var fr fileRead
	var err error
	if s.fault != nil {
		err = s.fault(faultRead, path)
	}
	bp := bufPool.Get().(*[]byte)
	defer putBuf(bp)
	if err == nil {
		fr, err = rd.readFile(pathz[len(rootPath)+1:], *bp, o.stat)
		if cap(fr.data) > cap(*bp) {
			*bp = fr.data[:0]
		}
	}
	base := Event[T]{Root: r.Path, Agent: r.Agent, Kernel: model.KernelID(kid), Path: path}
	var res kernelResult[T]
	switch {
	case err == nil:
		res.status = kConfig
		var cdata []byte
		var cerr error
		var cpath string
		if s.comp.Fold != nil {
			// As for pathz: one string is the path handed to Fold and,
			// NUL-terminated, the relative path opened.
			cpathz := rootPath + "/" + kid + "/config/" + s.comp.Name + "\x00"
			cpath = cpathz[:len(cpathz)-1]
			cb := bufPool.Get().(*[]byte)
			defer putBuf(cb)
			var cr fileRead
			cr, cerr = rd.readFile(cpathz[len(rootPath)+1:], *cb, false)
			if cap(cr.data) > cap(*cb) {
				*cb = cr.data[:0]
			}
			cdata = cr.data
		}
		if o.hash || o.prev != nil {
			// Content, not mtime/size: an fstat would cost more than hashing
			// 3 KB, and content equality cannot be fooled by a coarse clock.
			// The companion's content (or its absence) is part of it.
			if s.comp.Fold == nil {
				res.hash = maphash.Bytes(hashSeed, fr.data)
			} else {
				var h maphash.Hash
				h.SetSeed(hashSeed)
				_, _ = h.Write(fr.data)
				_ = h.WriteByte(0)
				if cerr != nil {
					_, _ = h.WriteString(cerr.Error())
				} else {
					_ = h.WriteByte(1)
					_, _ = h.Write(cdata)
				}
				res.hash = h.Sum64()
			}
			res.hashed = true
			if o.prev != nil && *o.prev == res.hash {
				return res
			}
		}
		v, perr := s.parse(path, fr.data)
		if s.comp.Fold != nil {
			v = s.comp.Fold(v, cpath, cdata, cerr)
		}
		res.has, res.ev = true, base
		res.ev.Kind, res.ev.Value, res.ev.Err = KernelUpdated, v, perr
		res.ev.ModTime, res.ev.Size = fr.modTime, fr.size
	case isSymlinkRefusal(err):
		return s.symlinkResult(r, rootPath, kid, base, err)
	case isMissing(err):
		return s.missingResult(r, rootPath, kid, base)
	case isPermission(err):
		res.status = kNoConfig
		if fi, lerr := os.Lstat(configDir(rootPath, kid)); lerr == nil && fi.IsDir() {
			res.status = kConfig
		}
		p := deniedPath(rootPath, kid)
		res.has, res.ev = true, base
		res.ev.Kind, res.ev.Path, res.ev.Issue = Problem, p, permissionIssue(r, kid, p, err)
	default:
		// Not a regular file, too large, an I/O error: the file exists but
		// gives no figures, which is what a parse failure means to the
		// engine (keep the last good contribution, show the error).
		res.status = kConfig
		res.has, res.ev = true, base
		res.ev.Kind, res.ev.Err = KernelUpdated, fmt.Errorf("read %s: %w", path, err)
	}
	return res
}

// bufPool holds read buffers: a scan reads 10,000 files of ~3 KB, and a
// fresh buffer per file costs more than the read (allocation, zeroing, GC).
// This is why ParseFunc must not keep data.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// putBuf returns a buffer to the pool, unless one odd file made it large.
func putBuf(bp *[]byte) {
	if cap(*bp) <= 64<<10 {
		bufPool.Put(bp)
	}
}

// symlinkResult handles a read refused because a component is a symlink.
func (s *scanner[T]) symlinkResult(r Root, rootPath, kid string, base Event[T], err error) kernelResult[T] {
	var res kernelResult[T]
	link := firstSymlink(rootPath, kid)
	if link == "" {
		// The link was replaced between the open and the lstat; report the
		// refusal as a read error, and the change's event brings a re-read.
		res.status = kConfig
		res.has, res.ev = true, base
		res.ev.Kind, res.ev.Err = KernelUpdated, fmt.Errorf("read %s: %w", base.Path, err)
		return res
	}
	switch link {
	case kernelDir(rootPath, kid):
		res.status = kGone
	case configDir(rootPath, kid):
		res.status = kNoConfig
	default:
		res.status = kConfig
	}
	res.has, res.ev = true, base
	res.ev.Kind, res.ev.Path = Problem, link
	res.ev.Issue = symlinkIssue(r, kid, link, judgeSymlink(rootPath, link))
	return res
}

// missingResult handles a read that found no file: the kernel directory
// may be gone (no event), config/ may not exist yet (pending), or config/
// may be a symlink (planted after the read's open).
func (s *scanner[T]) missingResult(r Root, rootPath, kid string, base Event[T]) kernelResult[T] {
	var res kernelResult[T]
	fi, err := os.Lstat(kernelDir(rootPath, kid))
	switch {
	case err != nil && isPermission(err):
		res.status = kNoConfig
		res.has, res.ev = true, base
		res.ev.Kind, res.ev.Path, res.ev.Issue = Problem, rootPath, permissionIssue(r, kid, rootPath, err)
		return res
	case err != nil, !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0:
		res.status = kGone
		return res
	case fi.Mode()&fs.ModeSymlink != 0:
		return s.symlinkResult(r, rootPath, kid, base, errors.New("symlink"))
	}
	res.status = kNoConfig
	if cfi, err := os.Lstat(configDir(rootPath, kid)); err == nil {
		if cfi.Mode()&fs.ModeSymlink != 0 {
			return s.symlinkResult(r, rootPath, kid, base, errors.New("symlink"))
		}
		if cfi.IsDir() {
			res.status = kConfig
		}
	}
	res.has, res.ev = true, base
	res.ev.Kind = KernelPending
	return res
}
