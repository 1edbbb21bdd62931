package procmap

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Status says what a Resolve found about a PID.
type Status string

// Resolve outcomes.
const (
	// Live: the process runs and its container (or none) was read.
	Live Status = "live"
	// Gone: the process exited before it could be read.
	Gone Status = "gone"
	// Reused: the PID now names a process that started after the listing
	// (or changed while it was read): what was read is not the listed
	// process's, and nothing is credited.
	Reused Status = "reused"
	// Unreadable: /proc could not be read for it (permissions, hidepid, a
	// malformed file); Err says why.
	Unreadable Status = "unreadable"
)

// Info is what Resolve found about one PID.
type Info struct {
	PID    uint32
	Status Status
	// Start is the process's start time in clock ticks after boot: with
	// PID, it names the process for good. Zero unless Live or Reused.
	Start uint64
	// Comm is its command name (Live only).
	Comm string
	// Container is the container id its cgroup names, "" for a host
	// process (Live only).
	Container string
	// Err says why the PID is Unreadable.
	Err string
}

// Mark is the moment a process listing was taken, in clock ticks after
// boot: a process that started later cannot be in that listing.
type Mark struct {
	Ticks uint64
	// OK is false when /proc/uptime could not be read; only the start-time
	// re-check then guards against a reused PID.
	OK bool
}

// entry is a resolved process, kept while its PID stays listed.
type entry struct {
	start     uint64
	comm      string
	container string
	seen      uint64
}

// Resolver reads processes under one /proc root and remembers, per
// (PID, start time), what their cgroup said: a process never changes
// container, so a steady GPU process costs one read of its stat file per
// poll. It is not safe for concurrent use.
type Resolver struct {
	root  string
	cache map[uint32]*entry
	round uint64
	// buf is reused for reads: stat and cgroup files are small.
	buf []byte
	// clock: the mark is read from CLOCK_BOOTTIME (root is "/proc"),
	// clockBase at clockAt, in round clockRound-1 (0: not yet).
	clock      bool
	clockBase  uint64 // ns
	clockAt    time.Time
	clockRound uint64
	// afterCgroup, in tests, runs between the cgroup read and the second
	// stat read (where a PID can change hands).
	afterCgroup func()
}

// NewResolver returns a Resolver over procRoot ("" means /proc).
func NewResolver(procRoot string) *Resolver {
	if procRoot == "" {
		procRoot = "/proc"
	}
	return &Resolver{root: procRoot, cache: map[uint32]*entry{}, buf: make([]byte, 0, 4096), clock: filepath.Clean(procRoot) == "/proc"}
}

// Root is the /proc root the resolver reads.
func (r *Resolver) Root() string { return r.root }

// Mark reads /proc/uptime: call it just before asking the driver for its
// process list, and pass the mark to Resolve for each PID of that list.
//
// On the host's own /proc (the root "/proc") the mark is read from the
// clock /proc/uptime shows (CLOCK_BOOTTIME), not from the file: the same
// ticks, and a poll of idle GPUs no longer reads a file at all. Another
// root (a host's /proc mounted elsewhere, a test's fake tree) is read.
func (r *Resolver) Mark() Mark {
	if r.clock {
		// CLOCK_BOOTTIME is a system call (no vDSO for it in Go): read
		// once per round, and carried on from there by the monotonic
		// clock, which runs with it but for a suspend (none happens in
		// the milliseconds of one poll).
		const tick = uint64(time.Second / ClockTicks)
		if r.clockRound == r.round+1 {
			return Mark{Ticks: (r.clockBase + uint64(time.Since(r.clockAt))) / tick, OK: true}
		}
		if ns, ok := clockMark(); ok {
			r.clockBase, r.clockAt, r.clockRound = ns, time.Now(), r.round+1
			return Mark{Ticks: ns / tick, OK: true}
		}
	}
	raw, err := r.read(filepath.Join(r.root, "uptime"), 256)
	if err != nil {
		return Mark{}
	}
	t, err := ParseUptime(raw)
	if err != nil {
		return Mark{}
	}
	return Mark{Ticks: t, OK: true}
}

// Resolve tells which process pid is and which container it runs in, as
// of a listing taken at mark.
func (r *Resolver) Resolve(pid uint32, mark Mark) Info {
	info := Info{PID: pid}
	dir := filepath.Join(r.root, strconv.FormatUint(uint64(pid), 10))
	st, status, why := r.stat(dir)
	if status != Live {
		info.Status, info.Err = status, why
		return info
	}
	info.Start = st.StartTicks
	if mark.OK && st.StartTicks > mark.Ticks {
		// Started after the listing: the listed process is gone and this
		// one took its PID.
		info.Status = Reused
		return info
	}
	if e := r.cache[pid]; e != nil && e.start == st.StartTicks {
		e.seen = r.round
		info.Status, info.Comm, info.Container = Live, e.comm, e.container
		return info
	}
	raw, err := r.read(filepath.Join(dir, "cgroup"), MaxCgroupSize)
	if err != nil {
		info.Status, info.Err = readStatus(err)
		return info
	}
	container := ParseCgroup(raw)
	if r.afterCgroup != nil {
		r.afterCgroup()
	}
	// The cgroup file read may belong to a process that took the PID
	// after the stat read: read the start time again.
	st2, status, why := r.stat(dir)
	switch {
	case status == Gone:
		info.Status = Gone
		return info
	case status != Live:
		info.Status, info.Err = status, why
		return info
	case st2.StartTicks != st.StartTicks:
		info.Status, info.Start = Reused, st2.StartTicks
		return info
	}
	r.cache[pid] = &entry{start: st.StartTicks, comm: st.Comm, container: container, seen: r.round}
	info.Status, info.Comm, info.Container = Live, st.Comm, container
	return info
}

// Sweep ends a poll: PIDs not resolved since the previous Sweep are
// forgotten, so the cache holds only what is on a GPU now.
func (r *Resolver) Sweep() {
	for pid, e := range r.cache {
		if e.seen != r.round {
			delete(r.cache, pid)
		}
	}
	r.round++
}

// stat reads and parses dir/stat.
func (r *Resolver) stat(dir string) (Stat, Status, string) {
	raw, err := r.read(filepath.Join(dir, "stat"), 4096)
	if err != nil {
		s, why := readStatus(err)
		return Stat{}, s, why
	}
	st, err := ParseStat(raw)
	if err != nil {
		return Stat{}, Unreadable, err.Error()
	}
	return st, Live, ""
}

// readStatus classifies a failed read: a PID directory or file that does
// not exist (ESRCH when the process exits mid-read) is a process gone.
func readStatus(err error) (Status, string) {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return Gone, ""
	}
	return Unreadable, err.Error()
}

// read reads at most limit bytes of path into the resolver's buffer; the
// result is valid until the next read.
func (r *Resolver) read(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := r.buf[:0]
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if n == 0 {
			break
		}
	}
	r.buf = buf
	return buf, nil
}
