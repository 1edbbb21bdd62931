package scratch

import (
	"time"

	"github.com/fgtop/fgtop/model"
)

// Root is one scratch root and the agent whose kernels live there.
type Root struct {
	Path  string
	Agent model.AgentID
}

// ParseFunc parses one resource.txt. It runs in the scanner's worker
// goroutines, several at once, so it must be safe for concurrent use.
//
// data is only valid during the call: the buffer is reused for the next file
// (a fresh 3 KB buffer per file, with its zeroing and garbage collection,
// would be a large share of the cost of reading it). Like io.Writer's p, it
// must not be retained: copy what the result keeps (string(data[i:j])
// copies; unsafe.String or sub-slices of data do not). path is the file's
// path, for error messages.
type ParseFunc[T any] func(path string, data []byte) (T, error)

// Companion is a second file a kernel's config directory may hold
// (Backend.AI's recovery.json), read beside resource.txt on every read of
// it, with the same refusal of symlinks, and watched like it: a change to
// either file brings a KernelUpdated.
type Companion[T any] struct {
	// Name is the file's name in <kernel>/config/.
	Name string
	// Fold gets ParseFunc's result for resource.txt and the companion's
	// bytes, or the error reading it (one that errors.Is fs.ErrNotExist
	// when there is none), and returns the event's Value. It runs where
	// ParseFunc runs, and data, like ParseFunc's, must not be retained.
	Fold func(v T, path string, data []byte, err error) T
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds. The zero value is invalid on purpose, so a forgotten Kind
// shows up.
const (
	// KernelUpdated: the file was read; Value and Err are the parse result.
	KernelUpdated EventKind = iota + 1
	// KernelPending: the kernel directory exists, resource.txt does not yet.
	KernelPending
	// KernelRemoved: the kernel directory is gone.
	KernelRemoved
	// RootMissing: the root does not exist (Issue set). A root that exists
	// but cannot be listed is a root-level Problem instead.
	RootMissing
	// RootRestored: a missing root is back; its kernels follow, then Resynced.
	RootRestored
	// Resynced: a full scan of the root finished; Present lists every kernel
	// seen under it, and kernels of the root not listed are gone.
	Resynced
	// Problem: Issue is set; see the package documentation.
	Problem
)

var kindNames = [...]string{
	KernelUpdated: "kernel-updated",
	KernelPending: "kernel-pending",
	KernelRemoved: "kernel-removed",
	RootMissing:   "root-missing",
	RootRestored:  "root-restored",
	Resynced:      "resynced",
	Problem:       "problem",
}

// String returns the kind's name, as used in logs and tests.
func (k EventKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Event is one thing that happened under a root. Root (the Root.Path as
// given) and Agent are always set; the other fields as the Kind says.
type Event[T any] struct {
	Kind  EventKind
	Root  string
	Agent model.AgentID
	// Kernel is set for kernel events and for kernel-scoped Problems.
	Kernel model.KernelID
	// Path is the resource.txt path for kernel events, the offending path for
	// Problems.
	Path string
	// Value and Err: KernelUpdated only.
	Value T
	Err   error
	// Size of the file that was read (KernelUpdated only). ModTime is set
	// on re-reads after a change (from an fstat of the open file) and zero
	// on events from full scans, where the fstat would add 10-15% to the
	// bare cost of reading 10,000 files.
	ModTime time.Time
	Size    int64
	// Present: Resynced only, sorted.
	Present []model.KernelID
	// Issue: Problem and RootMissing.
	Issue *model.Issue
}

// Options tune a Watcher. The zero value is usable.
type Options struct {
	// Debounce is how long a kernel's file must stay quiet before it is read
	// again after a change (default 20ms). A file written without pause is
	// still read at least every 5×Debounce.
	Debounce time.Duration
	// Workers reading and parsing files in parallel during full scans
	// (default GOMAXPROCS).
	Workers int
	// RescanInterval is a safety-net full rescan of every root (0 = off).
	RescanInterval time.Duration
	// RootPoll is how often a missing or unlistable root is checked for its
	// return (default 1s).
	RootPoll time.Duration
	// FallbackRescan is the rescan period of a root whose inotify watches
	// could not all be set (watch limit reached) (default 5s).
	FallbackRescan time.Duration
}

const (
	defaultDebounce       = 20 * time.Millisecond
	defaultRootPoll       = time.Second
	defaultFallbackRescan = 5 * time.Second
	// maxDebounceFactor caps how long a kernel written without pause waits.
	maxDebounceFactor = 5
)
