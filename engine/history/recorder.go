// Package history keeps fgtop's account of the node over time and answers
// from it: who held which device, how much, from when to when, and the
// whole snapshot as it was at any recorded moment.
//
// A Recorder follows the engine's snapshots and appends what changed to
// segment files in a directory (one writer per directory, by lock); a
// Reader answers from them. The format is in docs/history.md.
package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
)

// Defaults of Options.
const (
	DefaultKeep            = 7 * 24 * time.Hour
	DefaultMaxSize         = 100 << 20
	DefaultCheckpointEvery = 12 * time.Hour
	DefaultFlushEvery      = time.Second
	DefaultBeatEvery       = 10 * time.Second
)

// Options configure a Recorder.
type Options struct {
	Dir string
	// Keep drops segments older than this (default 7 days); MaxSize drops
	// the oldest segments while the directory is larger (default 100 MiB).
	Keep    time.Duration
	MaxSize int64
	// CheckpointEvery starts a new segment, with a full checkpoint, this
	// often (default 12 h): a query replays at most this much. A
	// checkpoint of a 10,000-kernel node is about 1 MiB: twice a day keeps
	// a week of such a node within 100 MiB.
	CheckpointEvery time.Duration
	// FlushEvery batches the writes (default 1 s); BeatEvery writes a
	// heartbeat while nothing changes (default 10 s), so that a reader can
	// tell a quiet node from a recorder that was not running.
	FlushEvery time.Duration
	BeatEvery  time.Duration
	// Clock is injectable for tests (default time.Now).
	Clock func() time.Time
	// Logf reports write problems (default: none).
	Logf func(format string, args ...any)
	// Level is the zstd level (default SpeedFastest: a node with one change
	// a second compresses each change on its own, and the faster level
	// costs a few per cent of size at the 10,000-kernel week).
	Level zstd.EncoderLevel
	// NoFolds: seal segments without their folds (seg-….fgf), which
	// spare a later read of sessions decoding them (the tests' records
	// of before folds).
	NoFolds bool
	// Names are the names this node's snapshots go by. When given, a
	// directory whose record last named another node is refused
	// (ErrOtherNode): the recorder would append this node's kernels to
	// that node's record, and every reader after that moment would take
	// them for the other node's. None: no check.
	Names []string
	// KernelsVouch: a kernel of the record's last moment whose
	// resource.txt is on this host, under one of Roots, shows the record
	// is this host's under another name (a renamed host, the name serve
	// --node gave it), and it is taken, said through Logf. Off for the
	// demo, whose kernels are not the host's; a copy of another node's
	// record names kernels whose scratch directories are on that node
	// only (their ids are UUIDs).
	KernelsVouch bool
	// Roots are this node's scratch roots (engine.Options.Roots). A
	// kernel file elsewhere vouches for nothing: a copy of the demo's
	// record names the demo's scratch files, which are on this host
	// while the demo runs, and a real recorder took the demo's record
	// for its own. None: no kernel vouches.
	Roots []string
}

// ErrOtherNode: the directory holds another node's record.
var ErrOtherNode = errors.New("the history directory holds another node's record")

// OtherNodeError says whose record a directory holds, and what to do.
type OtherNodeError struct {
	Dir   string
	Node  string    // the node the record's last moment names
	At    time.Time // that moment
	Names []string  // the names this node goes by
}

func (e *OtherNodeError) Error() string {
	return fmt.Sprintf("%s holds the record of node %q (last recorded at %s), not of this node (%s): recording here would mix the two; "+
		"give this node its own --history DIR; where it is this node's record under another name (a renamed host, serve --node), record under that name (--node %s) or move it aside (mv %s %s.old) and read it with --history",
		e.Dir, e.Node, fmtTime(e.At), quoteAll(e.Names), e.Node, e.Dir, e.Dir)
}

// Is makes errors.Is(err, ErrOtherNode) hold.
func (e *OtherNodeError) Is(target error) bool { return target == ErrOtherNode }

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " or ")
}

// Recorder appends the engine's changes to a history directory. Its
// methods are for one goroutine (Run's, or a test's).
type Recorder struct {
	opts Options
	// wokeAt is when Run's loop last woke, by the machine's clock (now;
	// nil: time.Now), and wokeRec the same moment by the recorder's
	// (woke).
	wokeAt, wokeRec time.Time
	now             func() time.Time

	lock *os.File
	// folding are the sealed segments' folds being written, off the
	// recorder's loop (a busy segment folds in a second); Close waits.
	// stopFold stops refold between segments.
	folding  sync.WaitGroup
	stopFold atomic.Bool

	// What the record says now (the last observed snapshot's view).
	prev   *model.Snapshot
	meta   metaRec
	devKey []byte
	devPtr *model.Device
	ubuf   []byte
	// sbuf is scratch for the small records of every change (issues,
	// tick, a kernel gone): appendRecord copies them out.
	sbuf     []byte
	issues   []model.Issue
	kernHash map[model.KernelID]uint64
	seed     maphash.Seed
	kbuf     enc

	// pending records for the open segment's delta stream; ckpt the
	// records of a checkpoint that opens the next segment.
	pending []byte
	ckpt    []byte
	// closing: records of the old segment to write before the checkpoint.
	closing   []byte
	ckptTime  time.Time
	needCkpt  bool
	segStart  time.Time
	lastWrite time.Time

	f    *os.File
	zbuf bytes.Buffer
	zw   *zstd.Encoder
	// tf is the open segment's tail file (tail.go), tailRecs the records
	// it holds, segSize the segment's size (where the tail continues it),
	// wbuf scratch for what one write(2) writes.
	tf       *os.File
	tailMax  int
	tailRecs []byte
	segSize  int64
	wbuf     []byte
	broken   bool
	retry    time.Time
	minute   minuteAcc
	err      error
	// carried: kernels of the previous recorder's last state, by the
	// hash of their record without times. A restarted engine scans
	// files without their modification time and sees every kernel anew;
	// a kernel that is otherwise the same keeps the times the record had.
	carried map[model.KernelID]carriedTimes
	// busy: the kernels running GPU processes now, for the minute's
	// summary (kept from the changes, not from a walk of every kernel).
	busy map[model.KernelID]*model.Kernel
	// devs: what the recorder keeps of each device with totals: whether
	// the record holds them (the others' follow from the kernels), and
	// the names to look its one slot and one agent up by.
	devs map[model.DeviceKey]*devNote
	// sampled: the device list last sampled (a new reading is a new list).
	sampled *model.Device
	// configHash is the agent.toml hash last seen; journalSeen the time
	// of the newest journal record in the record.
	configHash  string
	journalSeen time.Time
	// warned: the files retention skipped and said so (once each).
	warned map[string]bool
}

// createTail makes a segment's tail file afresh: a file of that name,
// left or planted, is removed (the name, never what a link points at)
// and the new one created exclusively, so no write lands in another file.
func createTail(path string) (*os.File, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
}

// followJournal records the agent.toml journal's new records (applies and
// rollbacks: the partitions as applied) when the config changed, and at
// the start. It reads a file: Run calls it, off the engine's goroutine.
func (r *Recorder) followJournal(s *model.Snapshot) {
	if s.ConfigPath == "" || s.ConfigHash == r.configHash {
		return
	}
	r.configHash = s.ConfigHash
	recs, _, err := agentconfig.ReadJournal(agentconfig.JournalPath(s.ConfigPath))
	if err != nil {
		return
	}
	for _, jr := range recs {
		if !jr.Time.After(r.journalSeen) || jr.Action == agentconfig.ActionFailed {
			// A failed write put no partition in force.
			continue
		}
		b, err := json.Marshal(jr)
		if err != nil {
			continue
		}
		r.pending = appendRecord(r.pending, recJournal, b)
		r.journalSeen = jr.Time
	}
}

// Partitions returns the journal records (applies, rollbacks) the record
// holds between from and until (zero: unbounded), oldest first.
func (rd *Reader) Partitions(from, until time.Time) []agentconfig.JournalRecord {
	var out []agentconfig.JournalRecord
	for i := range rd.segs {
		if !until.IsZero() && rd.segs[i].Start.After(until) {
			break
		}
		sr := rd.read(i, true)
		if sr.data == nil {
			continue
		}
		it := recIter{b: sr.data.Deltas}
		for {
			typ, body, ok := it.next()
			if !ok {
				break
			}
			if typ != recJournal {
				continue
			}
			var jr agentconfig.JournalRecord
			if json.Unmarshal(body, &jr) != nil {
				continue
			}
			if (from.IsZero() || !jr.Time.Before(from)) && (until.IsZero() || !jr.Time.After(until)) {
				out = append(out, jr)
			}
		}
	}
	return out
}

type carriedTimes struct {
	hash      uint64
	mod, seen time.Time
}

// timeless is the hash of a kernel's record without its times and use.
func (r *Recorder) timeless(k *model.Kernel) uint64 {
	c := *k
	c.ModTime, c.Seen, c.Use = time.Time{}, time.Time{}, nil
	e := enc{b: r.kbuf.b[:0]}
	at := encodeKernel(&e, &c)
	r.kbuf.b = e.b
	return maphash.Bytes(r.seed, e.b[:at])
}

// carry gives k the times of the previous record's kernel when only its
// times tell them apart.
func (r *Recorder) carry(k *model.Kernel) *model.Kernel {
	if len(r.carried) == 0 || !k.ModTime.IsZero() {
		if r.carried != nil {
			delete(r.carried, k.ID)
		}
		return k
	}
	ct, ok := r.carried[k.ID]
	if !ok || r.timeless(k) != ct.hash {
		// New or changed while no recorder ran: a follower that was
		// running saw it change, at the file's modification time.
		delete(r.carried, k.ID)
		if fi, err := os.Stat(k.Path); err == nil && k.Path != "" {
			c := *k
			c.ModTime = fi.ModTime()
			return &c
		}
		return k
	}
	c := *k
	c.ModTime, c.Seen = ct.mod, ct.seen
	return &c
}

// kernelHere is a kernel of snap whose resource.txt is a file on this
// host under one of roots ("" where none is).
func kernelHere(snap *model.Snapshot, roots []string) model.KernelID {
	var found model.KernelID
	snap.KernelSeq().Each(func(k *model.Kernel) {
		if found != "" || k.Path == "" || !underRoot(k.Path, roots) {
			return
		}
		if fi, err := os.Stat(k.Path); err == nil && fi.Mode().IsRegular() {
			found = k.ID
		}
	})
	return found
}

// underRoot says path lies inside one of roots, by whole path elements
// (/a/bc is not under /a/b) after cleaning (/a/b/../c is not under /a/b).
func underRoot(path string, roots []string) bool {
	p, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for _, root := range roots {
		if root == "" {
			continue
		}
		r, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(r, p); err == nil && rel != "." && filepath.IsLocal(rel) {
			return true
		}
	}
	return false
}

// lastState is the last state of dir's record (nil where there is none
// or it cannot be read).
func lastState(dir string, now time.Time) *Result {
	rd, err := OpenReader(dir)
	if err != nil {
		return nil
	}
	// The last segment a recorder wrote, not a planted one: a file named
	// for 2030 would otherwise set journalSeen there, and every journal
	// record before 2030 would be skipped.
	for len(rd.segs) > 0 {
		if _, why := ownSeg(rd.segs[len(rd.segs)-1], now); why == "" {
			break
		}
		rd.segs = rd.segs[:len(rd.segs)-1]
	}
	if len(rd.segs) == 0 {
		return nil
	}
	res, err := rd.At(rd.segs[len(rd.segs)-1].Start.Add(1 << 62))
	if err != nil || res.Snap == nil {
		return nil
	}
	return res
}

// loadCarried takes res, the last state of the directory's record (nil:
// none), as what the recorder carries on from.
func (r *Recorder) loadCarried(res *Result) {
	if res == nil {
		return
	}
	r.journalSeen = res.To
	if res.To.IsZero() {
		r.journalSeen = res.Snap.Time
	}
	r.carried = map[model.KernelID]carriedTimes{}
	res.Snap.KernelSeq().Each(func(k *model.Kernel) {
		r.carried[k.ID] = carriedTimes{hash: r.timeless(k), mod: k.ModTime, seen: k.Seen}
	})
}

// Open takes the directory's writer lock (creating the directory) and
// returns a recorder; ErrLocked when another process records there.
func Open(opts Options) (*Recorder, error) {
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = DefaultCheckpointEvery
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = DefaultFlushEvery
	}
	if opts.BeatEvery <= 0 {
		opts.BeatEvery = DefaultBeatEvery
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Level == 0 {
		opts.Level = zstd.SpeedFastest
	}
	// Records are personal data (owners, sessions, images): the
	// directory is the recorder's alone, and fgtop says so when it is not.
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("history: %w", mkdirWords(opts.Dir, err))
	}
	if w := dirWarning(opts.Dir); w != "" {
		opts.Logf("history: %s", w)
	}
	var lock *os.File
	var err error
	// A reader checks the lock with a shared flock for an instant: try
	// again briefly before calling the directory taken.
	for try := 0; try < 20; try++ {
		if lock, err = lockDir(opts.Dir); err == nil || !errors.Is(err, ErrLocked) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	// Read once, before retention, which would drop the other node's
	// segments; retention keeps the last segment, so this is the state
	// the recorder carries on from too.
	last := lastState(opts.Dir, opts.Clock())
	if len(opts.Names) > 0 {
		if last != nil && last.Snap.Node != "" && !slices.Contains(opts.Names, last.Snap.Node) {
			k := ""
			if opts.KernelsVouch {
				k = string(kernelHere(last.Snap, opts.Roots))
			}
			if k == "" {
				lock.Close()
				return nil, &OtherNodeError{Dir: opts.Dir, Node: last.Snap.Node, At: last.Snap.Time, Names: opts.Names}
			}
			opts.Logf("history: %s was last recorded as node %q; its kernel %s runs on this host, so it is this node's record: recording as %q from now on",
				opts.Dir, last.Snap.Node, k, opts.Names[0])
		}
	}
	r := &Recorder{opts: opts, lock: lock, tailMax: tailMax, kernHash: map[model.KernelID]uint64{}, seed: maphash.MakeSeed(), needCkpt: true,
		busy: map[model.KernelID]*model.Kernel{}, devs: map[model.DeviceKey]*devNote{}}
	// A fold a killed recorder was writing is half a file: the lock is
	// ours, so no one else writes one now.
	if tmps, err := filepath.Glob(filepath.Join(opts.Dir, ".fold-*")); err == nil {
		for _, p := range tmps {
			os.Remove(p)
		}
	}
	r.retain(opts.Clock())
	r.loadCarried(last)
	if !opts.NoFolds {
		r.refold()
	}
	return r, nil
}

// refold folds, off the recorder's loop, the sealed segments whose fold
// is missing or was made by other rules of the walk (foldMagic): after
// an upgrade the readers would walk every segment of the record, seconds
// a week, until retention dropped them. Close stops it between segments.
func (r *Recorder) refold() {
	segs, err := listSegments(r.opts.Dir)
	if err != nil {
		return
	}
	var stale []string
	for _, sf := range segs {
		if _, err := os.Lstat(tailPath(sf.Path)); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if !foldCurrent(foldPath(sf.Path)) {
			stale = append(stale, sf.Path)
		}
	}
	if len(stale) == 0 {
		return
	}
	logf := r.opts.Logf
	r.folding.Add(1)
	go func() {
		defer r.folding.Done()
		for _, p := range stale {
			if r.stopFold.Load() {
				return
			}
			if err := WriteFold(p); err != nil && logf != nil {
				logf("history: %v", err)
			}
		}
	}()
}

// foldCurrent: the file at path is a fold made by this version's rules
// (whether it is of its segment is the reader's check). Opened as the
// readers open the record's files: a FIFO planted there would hold the
// recorder's start for good.
func foldCurrent(path string) bool {
	f, err := safefile.Open(path, true)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(foldMagic))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == foldMagic
}

// Dir is the directory recorded into.
func (r *Recorder) Dir() string { return r.opts.Dir }

// Err is the last write error (nil once writing works again).
func (r *Recorder) Err() error { return r.err }

// Run records every snapshot from snaps until ctx is done or snaps is
// closed, writing once per FlushEvery; it closes the recorder on return.
func (r *Recorder) Run(ctx context.Context, snaps <-chan *model.Snapshot) error {
	defer r.Close()
	flush := time.NewTimer(r.opts.FlushEvery)
	flush.Stop()
	armed := false
	beat := time.NewTicker(r.opts.BeatEvery)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			r.woke()
			return nil
		case s, ok := <-snaps:
			r.woke()
			if !ok {
				return nil
			}
			r.Observe(s)
			r.followJournal(s)
			if !armed {
				flush.Reset(r.opts.FlushEvery)
				armed = true
			}
		case <-flush.C:
			r.woke()
			armed = false
			r.Flush()
		case <-beat.C:
			r.woke()
			if !armed {
				r.Flush()
			}
		}
	}
}

// woke notes a wake of Run's loop. The loop
// wakes at least every BeatEvery, for its beat: a wake later than that,
// and a flush or two, after the one before means the process did not run
// meanwhile (stopped with SIGSTOP, starved, the machine suspended), and
// nothing was watched. Its record says so (a stall record), or a reader
// would answer for that time with the node as it was before it. The
// monotonic clock says how long the process waited; the wall clock too,
// as a suspended machine's monotonic clock stands still.
func (r *Recorder) woke() {
	// The recorder's clock first: a wait inside it is a wait before
	// this wake.
	at := r.opts.Clock()
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	if !r.wokeAt.IsZero() {
		gap := max(now.Sub(r.wokeAt), now.Round(0).Sub(r.wokeAt.Round(0)))
		if gap > r.opts.BeatEvery+2*r.opts.FlushEvery && at.After(r.wokeRec) {
			var e enc
			e.varint(r.wokeRec.UnixNano())
			e.varint(at.UnixNano())
			r.pending = appendRecord(r.pending, recStall, e.b)
		}
	}
	r.wokeAt, r.wokeRec = now, at
}

// Observe adds what changed since the last snapshot to the pending
// records. It does no I/O.
func (r *Recorder) Observe(s *model.Snapshot) {
	if s == nil {
		return
	}
	r.closeMinute(s.Time)
	if len(s.Devices) > 0 && &s.Devices[0] != r.sampled {
		r.minute.sample(s)
		r.sampled = &s.Devices[0]
	}
	if r.needCkpt || (!r.segStart.IsZero() && s.Time.Sub(r.segStart) >= r.opts.CheckpointEvery) {
		r.checkpoint(s)
		return
	}
	r.diff(s)
}

// checkpoint makes the records of a full state: the next flush opens a
// new segment with it.
func (r *Recorder) checkpoint(s *model.Snapshot) {
	if !r.needCkpt {
		// Rotation: what is pending belongs to the old segment.
		r.closing = appendRecord(r.pending, recRotate, (&enc{}).varintB(s.Time.UnixNano()))
	}
	r.pending = nil
	r.needCkpt = false
	r.segStart = s.Time
	r.ckptTime = s.Time
	r.prev = nil
	clear(r.kernHash)
	clear(r.busy)
	r.devPtr, r.devKey, r.issues = nil, nil, nil
	r.ckpt = r.ckpt[:0]
	r.ckpt = r.appendDiff(r.ckpt, s, true)
}

func (r *Recorder) diff(s *model.Snapshot) {
	r.pending = r.appendDiff(r.pending, s, false)
}

// appendDiff appends the records that turn the previous snapshot into s,
// and s's tick.
func (r *Recorder) appendDiff(dst []byte, s *model.Snapshot, full bool) []byte {
	prev := r.prev
	m := metaOf(s)
	if full || !m.equal(&r.meta) {
		b, _ := json.Marshal(m)
		dst = appendRecord(dst, recMeta, b)
		r.meta = m
	}
	var dp *model.Device
	if len(s.Devices) > 0 {
		dp = &s.Devices[0]
	}
	if full || dp != r.devPtr || dp == nil && r.devKey == nil {
		if key := stableDevices(s.Devices); full || !bytes.Equal(key, r.devKey) {
			b, _ := json.Marshal(s.Devices)
			dst = appendRecord(dst, recDevices, b)
			r.devKey = key
		}
		r.devPtr = dp
	}
	shape := full || prev == nil || !agentsShapeEqual(s.Agents, prev.Agents)
	if shape {
		ab, _ := json.Marshal(agentsShape(s.Agents))
		dst = appendRecord(dst, recAgents, ab)
	}
	if shape || !totalsEqual(s.Agents, prev.Agents) {
		e := enc{b: r.ubuf[:0]}
		encodeTotals(&e, s.Agents)
		dst = appendRecord(dst, recTotals, e.b)
		r.ubuf = e.b
	}
	if full {
		for _, n := range r.devs {
			n.recorded, n.last = false, nil
		}
	}
	for k, u := range s.Usage {
		n := r.devs[k]
		if n == nil {
			n = &devNote{}
			r.devs[k] = n
		}
		if n.last == u {
			// The engine gives a changed device a new pointer.
			continue
		}
		n.last = u
		if n.derivable(u) {
			// Whole numbers add up the same in any order: the reader
			// sums them from the kernels (CPU cores, memory, whole GPUs).
			if n.recorded {
				n.recorded = false
				e := enc{}
				e.str(string(k.Name))
				e.str(string(k.ID))
				dst = appendRecord(dst, recUsageCalc, e.b)
			}
			continue
		}
		n.recorded = true
		e := enc{b: r.ubuf[:0]}
		encodeUsage(&e, u)
		dst = appendRecord(dst, recUsage, e.b)
		r.ubuf = e.b
	}
	if len(r.devs) > len(s.Usage) {
		// Devices with nothing held any more.
		for k, n := range r.devs {
			if _, ok := s.Usage[k]; ok {
				continue
			}
			if n.recorded {
				e := enc{}
				e.str(string(k.Name))
				e.str(string(k.ID))
				dst = appendRecord(dst, recUsageGone, e.b)
			}
			delete(r.devs, k)
		}
	}
	var prevSeq *model.KernelSeq
	if prev != nil && !full {
		prevSeq = prev.KernelSeq()
	}
	model.DiffKernels(prevSeq, s.KernelSeq(), func(o, k *model.Kernel) {
		if k == nil {
			delete(r.busy, o.ID)
			e := enc{b: r.sbuf[:0]}
			e.id(string(o.ID))
			dst = appendRecord(dst, recKernelGone, e.b)
			r.sbuf = e.b
			return
		}
		if k.Use != nil && k.Use.Procs > 0 {
			r.busy[k.ID] = k
			r.minute.sampleKernel(k)
		} else if o != nil && o.Use != nil {
			delete(r.busy, k.ID)
		}
		k = r.carry(k)
		if o != nil && !full {
			// Only what changed: most of a kernel (ids, record, path)
			// stays as it came.
			m := kernelMask(o, k)
			if m == 0 {
				return
			}
			r.kbuf.b = r.kbuf.b[:0]
			encodePatch(&r.kbuf, k, m)
			dst = appendRecord(dst, recKernelPatch, r.kbuf.b)
			return
		}
		r.kbuf.b = r.kbuf.b[:0]
		encodeKernel(&r.kbuf, k)
		dst = appendRecord(dst, recKernel, r.kbuf.b)
	})
	if full || !issuesEqual(s.Issues, r.issues) {
		e := enc{b: r.sbuf[:0]}
		typ := recIssues
		if full {
			encodeIssues(&e, s.Issues)
		} else {
			typ = recIssuesPatch
			encodeIssuesPatch(&e, r.issues, s.Issues)
		}
		dst = appendRecord(dst, typ, e.b)
		r.sbuf = e.b
		r.issues = s.Issues
	}
	e := enc{b: r.sbuf[:0]}
	e.uvarint(s.Seq)
	e.varint(s.Time.UnixNano())
	dst = appendRecord(dst, recTick, e.b)
	r.sbuf = e.b
	r.prev = s
	return dst
}

func issuesEqual(a, b []model.Issue) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (e *enc) varintB(v int64) []byte {
	e.varint(v)
	return e.b
}

// closeMinute appends the summary of the minute before t once t is in a
// later minute.
func (r *Recorder) closeMinute(t time.Time) {
	start := t.Truncate(time.Minute)
	if r.minute.start.IsZero() {
		r.minute.start = start
		return
	}
	if !start.After(r.minute.start) {
		return
	}
	for _, k := range r.busy {
		r.minute.sampleKernel(k)
	}
	if rec := r.minute.record(); rec != nil {
		b, _ := json.Marshal(rec)
		r.pending = appendRecord(r.pending, recMinute, b)
	}
	r.minute = minuteAcc{start: start}
}

// Flush writes what is pending: the end of the old segment and a new
// segment's checkpoint when one is due, then the pending deltas as one
// chunk. After a failed write (a full disk) it starts a new segment from
// the last snapshot on the next try, at most every few seconds.
func (r *Recorder) Flush() error {
	now := r.opts.Clock()
	if r.broken {
		if now.Before(r.retry) || r.prev == nil {
			return r.err
		}
		r.broken = false
		r.closeSegment(false)
		r.closing = nil
		r.checkpoint(r.prev)
		r.ckptTime = r.prev.Time
	}
	if len(r.pending) == 0 && len(r.ckpt) == 0 && len(r.closing) == 0 {
		if r.f == nil || now.Sub(r.lastWrite) < r.opts.BeatEvery {
			return nil
		}
		r.pending = appendRecord(nil, recBeat, (&enc{}).varintB(now.UnixNano()))
	}
	if err := r.write(now); err != nil {
		if r.err == nil {
			// Once, not every retry: a full disk stays full a while.
			r.opts.Logf("history: %v; recording resumes when writing works again", err)
		}
		r.err = err
		r.broken = true
		r.retry = now.Add(5 * time.Second)
		return err
	}
	if r.err != nil {
		r.opts.Logf("history: writing again (what came in meanwhile is summed up in a new checkpoint)")
	}
	r.err = nil
	r.lastWrite = now
	return nil
}

func (r *Recorder) write(now time.Time) error {
	if len(r.closing) > 0 && r.f != nil {
		if err := r.finishSegment(r.closing); err != nil {
			return err
		}
	}
	r.closing = nil
	if len(r.ckpt) > 0 {
		z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(r.opts.Level), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return err
		}
		payload := z.EncodeAll(r.ckpt, nil)
		if err := r.openSegment(r.ckptTime, payload); err != nil {
			return err
		}
		r.ckpt = r.ckpt[:0]
		r.retain(now)
	}
	if len(r.pending) > 0 && r.f != nil {
		if err := r.appendDeltas(r.pending); err != nil {
			return err
		}
		r.pending = r.pending[:0]
	}
	return nil
}

// appendDeltas writes records after what the open segment holds: as a
// frame of its tail (one write(2), nothing compressed), or, when the tail
// would grow past tailMax, compressed into the segment together with what
// the tail holds, which then starts afresh.
func (r *Recorder) appendDeltas(recs []byte) error {
	if len(r.tailRecs)+len(recs) <= r.tailMax {
		r.wbuf = appendTailFrame(r.wbuf[:0], recs)
		if _, err := r.tf.Write(r.wbuf); err != nil {
			return fmt.Errorf("write %s: %w", r.tf.Name(), err)
		}
		r.tailRecs = append(r.tailRecs, recs...)
		return nil
	}
	if err := r.writeChunk(recs, false); err != nil {
		return err
	}
	// Only once the chunk is written whole: a tail that still names the
	// old offset is ignored by readers (the segment is longer now), and
	// one cut short here holds nothing.
	if err := r.tf.Truncate(0); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if _, err := r.tf.Write(tailHeader(r.segSize)); err != nil {
		return fmt.Errorf("write %s: %w", r.tf.Name(), err)
	}
	return nil
}

// writeChunk compresses the tail's records and recs into one delta chunk
// of the segment; last also ends the segment's zstd frame.
func (r *Recorder) writeChunk(recs []byte, last bool) error {
	r.zbuf.Reset()
	if _, err := r.zw.Write(r.tailRecs); err != nil {
		return err
	}
	if _, err := r.zw.Write(recs); err != nil {
		return err
	}
	var err error
	if last {
		err = r.zw.Close()
	} else {
		err = r.zw.Flush()
	}
	if err != nil {
		return err
	}
	r.tailRecs = r.tailRecs[:0]
	if r.zbuf.Len() == 0 {
		return nil
	}
	r.wbuf = appendChunk(r.wbuf[:0], chunkDelta, r.zbuf.Bytes())
	if _, err := r.f.Write(r.wbuf); err != nil {
		return fmt.Errorf("write %s: %w", r.f.Name(), err)
	}
	r.segSize += int64(len(r.wbuf))
	return nil
}

// openSegment starts a segment with a checkpoint (its compressed records)
// and the segment's tail file.
func (r *Recorder) openSegment(start time.Time, ckpt []byte) error {
	r.closeSegment(false)
	var f *os.File
	var err error
	for i := 0; i < 100; i++ {
		path := filepath.Join(r.opts.Dir, segName(start.Add(time.Duration(i))))
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	// A segment without its checkpoint holds nothing a reader can use:
	// do not leave one per retry on a full disk.
	drop := func(err error) error {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	b := appendChunk(segmentHeader(), chunkCheckpoint, ckpt)
	if _, err := f.Write(b); err != nil {
		return drop(fmt.Errorf("write %s: %w", f.Name(), err))
	}
	tf, err := createTail(tailPath(f.Name()))
	if err != nil {
		return drop(fmt.Errorf("history: %w", err))
	}
	if _, err := tf.Write(tailHeader(int64(len(b)))); err != nil {
		tf.Close()
		os.Remove(tf.Name())
		return drop(fmt.Errorf("write %s: %w", tf.Name(), err))
	}
	zw, err := zstd.NewWriter(&r.zbuf, zstd.WithEncoderLevel(r.opts.Level), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(8<<20))
	if err != nil {
		tf.Close()
		os.Remove(tf.Name())
		return drop(err)
	}
	r.f, r.tf, r.zw = f, tf, zw
	r.segSize = int64(len(b))
	r.tailRecs = r.tailRecs[:0]
	r.zbuf.Reset()
	return nil
}

// finishSegment writes recs and what the tail holds as the segment's last
// chunk, ends its zstd frame, closes it and removes its tail.
func (r *Recorder) finishSegment(recs []byte) error {
	if err := r.writeChunk(recs, true); err != nil {
		return err
	}
	r.f.Close()
	r.tf.Close()
	os.Remove(r.tf.Name())
	path := r.f.Name()
	r.f, r.tf, r.zw = nil, nil, nil
	// Sealed, the segment never changes: its fold spares every later
	// read of sessions over it decoding it. One that cannot be written
	// costs those reads time, never an answer (they walk the segment).
	if !r.opts.NoFolds {
		logf := r.opts.Logf
		r.folding.Add(1)
		go func() {
			defer r.folding.Done()
			if err := WriteFold(path); err != nil {
				logf("history: %v", err)
			}
		}()
	}
	return nil
}

// closeSegment ends the open segment; clean also compresses its tail
// into it and ends its zstd frame. An unclean end leaves the tail for the
// readers.
func (r *Recorder) closeSegment(clean bool) {
	if r.f == nil {
		return
	}
	if clean && r.finishSegment(nil) == nil {
		return
	}
	r.f.Close()
	r.tf.Close()
	r.f, r.tf, r.zw = nil, nil, nil
	r.tailRecs = r.tailRecs[:0]
}

// Close writes what is pending, marks the end and releases the lock.
func (r *Recorder) Close() error {
	if r.lock == nil {
		return nil
	}
	if r.prev != nil {
		r.closeMinute(r.opts.Clock().Add(time.Minute))
		r.pending = appendRecord(r.pending, recEnd, (&enc{}).varintB(r.opts.Clock().UnixNano()))
	}
	err := r.Flush()
	r.closeSegment(true)
	r.stopFold.Store(true)
	r.folding.Wait()
	r.lock.Close()
	r.lock = nil
	return err
}

// mkdirWords says why the history directory cannot be made in fgtop's
// words: a file in its place ("mkdir DIR: not a directory" named neither
// which file nor what to do) or a directory this user may not write.
func mkdirWords(dir string, err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, syscall.ENOTDIR) && errors.As(err, &pe):
		return fmt.Errorf("cannot make the history directory %s: %s is a file, not a directory: name another directory for the record", dir, pe.Path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot make the history directory %s: this user may not write there; run fgtop as a user that may, or name another directory (%w)", dir, err)
	}
	return err
}
