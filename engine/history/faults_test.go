package history

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// synthNode makes snapshots of a node whose kernels come, change and go,
// one change per snapshot, a second apart: what a recorder sees.
type synthNode struct {
	rng   *rand.Rand
	ks    map[model.KernelID]*model.Kernel
	seq   uint64
	t     time.Time
	next  int
	bloat int // bytes of random image name per kernel, to fill a disk
}

func newSynth(seed uint64, kernels int) *synthNode {
	n := &synthNode{rng: rand.New(rand.NewPCG(seed, 1)), ks: map[model.KernelID]*model.Kernel{}, t: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	for i := 0; i < kernels; i++ {
		n.add()
	}
	return n
}

func (n *synthNode) kernel(id model.KernelID) *model.Kernel {
	dev := model.DeviceID(fmt.Sprint(n.rng.IntN(8)))
	img := "cr.backend.ai/stable/python:3.9"
	if n.bloat > 0 {
		b := make([]byte, n.bloat)
		for i := range b {
			b[i] = 'a' + byte(n.rng.IntN(26))
		}
		img = string(b)
	}
	return &model.Kernel{ID: id, Agent: "i-node01", AgentBy: model.AgentByRecord, State: model.KernelOK,
		Path: "/var/lib/backend.ai/scratches/" + string(id) + "/config/resource.txt", Seen: n.t, ModTime: n.t,
		Slots: model.ResourceSlot{model.SlotCUDAShares: model.NewDec(int64(1+n.rng.IntN(9)), -1)},
		Alloc: model.Allocations{model.SlotCUDAShares: {dev: model.NewDec(int64(1+n.rng.IntN(9)), -1)}},
		Record: &model.KernelRecord{SessionID: fmt.Sprintf("%08x-5e55-4000-8000-%012x", n.rng.Uint32(), n.rng.Uint64()>>16),
			OwnerUserID: fmt.Sprintf("user-%03d", n.rng.IntN(200)), Image: img}}
}

func (n *synthNode) add() {
	id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-%012x", n.next, n.rng.Uint64()>>16))
	n.next++
	n.ks[id] = n.kernel(id)
}

// step makes one change and returns the snapshot after it.
func (n *synthNode) step() *model.Snapshot {
	n.t = n.t.Add(time.Second)
	var any model.KernelID
	for id := range n.ks {
		any = id
		break
	}
	switch r := n.rng.IntN(3); {
	case r == 0 || any == "":
		n.add()
	case r == 1:
		delete(n.ks, any)
	default:
		k := n.kernel(any)
		k.Seen = n.ks[any].Seen
		n.ks[any] = k
	}
	return n.snap()
}

func (n *synthNode) snap() *model.Snapshot {
	n.seq++
	s := &model.Snapshot{Seq: n.seq, Time: n.t, Node: "node01", Source: model.SourceInfo{Kind: "mock", Health: "ok"}}
	ks := make([]*model.Kernel, 0, len(n.ks))
	usage := map[model.DeviceKey]*model.DeviceUsage{}
	for _, k := range n.ks {
		ks = append(ks, k)
		for id, v := range k.Alloc[model.SlotCUDAShares] {
			key := model.DeviceKey{Name: "cuda", ID: id}
			u := usage[key]
			if u == nil {
				u = &model.DeviceUsage{Key: key, Held: model.ResourceSlot{}}
				usage[key] = u
			}
			u.Held[model.SlotCUDAShares] = u.Held[model.SlotCUDAShares].Add(v)
			u.Kernels++
		}
	}
	s.SetKernels(ks)
	s.Usage = usage
	// Issues whose messages move with the amounts, as the engine's
	// over-capacity ones do: most changes edit a message or two.
	keys := make([]model.DeviceKey, 0, len(usage))
	for k := range usage {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b model.DeviceKey) int { return strings.Compare(string(a.ID), string(b.ID)) })
	for _, k := range keys {
		u := usage[k]
		s.Issues = append(s.Issues, model.Issue{Severity: model.SevWarning, Code: "over-capacity", Device: k,
			Message: fmt.Sprintf("cuda:%s is held beyond its capacity: %s of 1.0 by %d kernel(s)", k.ID, u.Held[model.SlotCUDAShares], u.Kernels)})
	}
	return s
}

// record runs a recorder over steps changes of node, flushing every
// flushEvery snapshots, and returns the documents of what it saw.
func recordSynth(t *testing.T, dir string, node *synthNode, steps, flushEvery int, opts Options) []seen {
	t.Helper()
	opts.Dir = dir
	if opts.Clock == nil {
		opts.Clock = func() time.Time { return node.t }
	}
	rec, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []seen
	for i := 0; i < steps; i++ {
		s := node.step()
		rec.Observe(s)
		out = append(out, seen{s, docOf(t, s)})
		if i%flushEvery == flushEvery-1 {
			rec.Flush()
		}
	}
	rec.Close()
	return out
}

func mustAt(t *testing.T, dir string, at time.Time) *Result {
	t.Helper()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.At(at)
	if err != nil {
		t.Fatalf("At %s: %v", at, err)
	}
	return res
}

// A segment cut anywhere (a crash, a full disk) loses only what comes
// after the cut: every moment before the last intact chunk is answered
// exactly, and later moments get the last intact state.
func TestTruncatedTailAtEveryOffset(t *testing.T) {
	dir := t.TempDir()
	got := recordSynth(t, dir, newSynth(1, 30), 40, 4, Options{})
	segs, _ := listSegments(dir)
	if len(segs) != 1 {
		t.Fatalf("%d segments", len(segs))
	}
	full, _ := os.ReadFile(segs[0].Path)
	for cut := headerSize; cut < len(full); cut += 1 + len(full)/100 {
		if err := os.WriteFile(segs[0].Path, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		rd, err := OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		intact := 0
		for i, s := range got {
			res, err := rd.At(s.snap.Time)
			var out *OutsideError
			if errors.As(err, &out) && i > intact {
				// Past the last intact record: outside it, plainly.
				continue
			}
			if err != nil {
				// Only a cut inside the checkpoint leaves nothing.
				if i == 0 {
					break
				}
				t.Fatalf("cut %d: At %d: %v", cut, i, err)
			}
			if !bytes.Equal(docOf(t, res.Snap), s.doc) {
				// From here on the record lacks the changes: every later
				// answer is the last intact state, and says so where the
				// asked time is past the record's end.
				if res.Snap.Seq != got[intact].snap.Seq {
					t.Fatalf("cut %d: At %d gave seq %d, want the last intact %d", cut, i, res.Snap.Seq, got[intact].snap.Seq)
				}
				continue
			}
			if i != intact+1 && i != 0 && intact != i-1 {
				t.Fatalf("cut %d: %d exact after a lost one", cut, i)
			}
			intact = i
		}
	}
}

// A damaged segment in the middle costs that segment from the damage on;
// the segments before and after answer exactly and the record says what
// is missing.
func TestCorruptSegmentInTheMiddle(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(2, 40)
	got := recordSynth(t, dir, node, 90, 3, Options{CheckpointEvery: 30 * time.Second})
	segs, _ := listSegments(dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments, want at least 3", len(segs))
	}
	mid := segs[1]
	b, _ := os.ReadFile(mid.Path)
	for i := len(b) * 2 / 3; i < len(b)*2/3+8; i++ {
		b[i] ^= 0x5a
	}
	os.WriteFile(mid.Path, b, 0o644)
	var exact, lacking int
	for _, s := range got {
		res := mustAt(t, dir, s.snap.Time)
		same := bytes.Equal(docOf(t, res.Snap), s.doc)
		inMid := !s.snap.Time.Before(mid.Start) && s.snap.Time.Before(segs[2].Start)
		switch {
		case !inMid && !same:
			t.Fatalf("seq %d outside the damaged segment differs", s.snap.Seq)
		case !res.Exact && !same:
			lacking++
			if len(res.Missing) == 0 || !strings.Contains(res.Missing[0].Why, filepath.Base(mid.Path)) {
				t.Fatalf("seq %d: missing %v does not name the segment", s.snap.Seq, res.Missing)
			}
		case res.Exact && !same:
			t.Fatalf("seq %d: wrong answer called exact", s.snap.Seq)
		default:
			exact++
		}
	}
	if lacking == 0 || exact < 60 {
		t.Fatalf("%d exact, %d lacking", exact, lacking)
	}
	rd, _ := OpenReader(dir)
	h, err := rd.History(Filter{Device: "cuda:3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Missing) != 1 || !strings.Contains(h.Missing[0].Why, "checksum") {
		t.Fatalf("history missing %v", h.Missing)
	}
	if len(h.Intervals) == 0 {
		t.Fatal("history lists nothing")
	}
}

// A full disk: writes fail, the recorder says so and keeps its state;
// what was written stays readable, and once there is room again it starts
// a new segment and the record goes on.
func TestDiskFull(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "small")
	os.MkdirAll(dir, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	hist := filepath.Join(dir, "h")
	filler := filepath.Join(dir, "filler")
	node := newSynth(3, 20)
	node.bloat = 400 // incompressible: the disk fills within the test
	var logs []string
	clock := node.t
	rec, err := Open(Options{Dir: hist, Clock: func() time.Time { return clock }, Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	// Leave about 40 KiB.
	var st syscall.Statfs_t
	syscall.Statfs(dir, &st)
	os.WriteFile(filler, make([]byte, int64(st.Bavail)*st.Bsize-40<<10), 0o644)
	var got []seen
	failedAt := -1
	for i := 0; i < 400 && failedAt < 0; i++ {
		s := node.step()
		clock = s.Time
		rec.Observe(s)
		got = append(got, seen{s, docOf(t, s)})
		if rec.Flush() != nil {
			failedAt = i
		}
	}
	if failedAt < 0 {
		t.Fatal("the disk never filled")
	}
	if len(logs) == 0 || !strings.Contains(logs[0], "no space") {
		t.Fatalf("logs %v", logs)
	}
	// The record answers up to the last write that went through.
	res := mustAt(t, hist, got[0].snap.Time)
	if !bytes.Equal(docOf(t, res.Snap), got[0].doc) {
		t.Fatal("the first snapshot is lost")
	}
	// Room again: the recorder starts over with a checkpoint.
	os.Remove(filler)
	for i := 0; i < 10; i++ {
		s := node.step()
		clock = s.Time.Add(10 * time.Second)
		rec.Observe(s)
		got = append(got, seen{s, docOf(t, s)})
		rec.Flush()
	}
	if rec.Err() != nil {
		t.Fatalf("still failing: %v", rec.Err())
	}
	rec.Close()
	last := got[len(got)-1]
	res = mustAt(t, hist, last.snap.Time)
	if !bytes.Equal(docOf(t, res.Snap), last.doc) {
		t.Fatal("after the disk had room again, the last snapshot is not recorded")
	}
	rd, _ := OpenReader(hist)
	h, err := rd.History(Filter{Device: "cuda:0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Missing) == 0 {
		t.Fatal("the full disk's gap is not reported")
	}
}

// A segment deleted from the middle of a chain of rotations is a gap,
// not a silent jump: the record says a segment is missing there.
func TestDeletedSegmentIsAGap(t *testing.T) {
	dir := t.TempDir()
	got := recordSynth(t, dir, newSynth(8, 20), 90, 3, Options{CheckpointEvery: 30 * time.Second})
	segs, _ := listSegments(dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	os.Remove(segs[1].Path)
	in := got[len(got)/2].snap.Time
	if in.Before(segs[1].Start) || !in.Before(segs[2].Start) {
		in = segs[1].Start.Add(time.Second)
	}
	res := mustAt(t, dir, in)
	if res.Exact || len(res.Missing) == 0 || !strings.Contains(res.Missing[0].Why, "segment is missing") {
		t.Fatalf("inside the deleted segment: exact %v, missing %v", res.Exact, res.Missing)
	}
	rd, _ := OpenReader(dir)
	h, err := rd.History(Filter{Device: "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Missing) != 1 || !strings.Contains(h.Missing[0].Why, "segment is missing") {
		t.Fatalf("history missing %v", h.Missing)
	}
	// After the gap, the next segment's checkpoint is the truth again.
	last := got[len(got)-1]
	if res := mustAt(t, dir, last.snap.Time); !res.Exact || !bytes.Equal(docOf(t, res.Snap), last.doc) {
		t.Fatal("after the gap the record is not exact")
	}
}

// A recorder that holds the directory but writes nothing (a full disk)
// does not make the record pass for live: a later moment is not exact.
func TestHeldButNotWriting(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(9, 5)
	got := recordSynth(t, dir, node, 5, 1, Options{})
	rec, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	later := got[len(got)-1].snap.Time.Add(time.Minute)
	res := mustAt(t, dir, later)
	if res.Exact || len(res.Missing) == 0 || !strings.Contains(res.Missing[0].Why, "not writing") {
		t.Fatalf("a minute after the last write: exact %v, missing %v", res.Exact, res.Missing)
	}
}

// TestFutureWhileRecording: a moment to come, asked while a recorder
// holds the directory, is in the future, and said so; it once read as a
// recorder that failed to write (a full disk?). Without a clock the
// reader still answers it from the record's end (the recorder's resume).
func TestFutureWhileRecording(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(9, 5)
	got := recordSynth(t, dir, node, 5, 1, Options{})
	rec, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	last := got[len(got)-1].snap.Time
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := last.Add(10 * time.Second)
	rd.Now = func() time.Time { return now }
	_, err = rd.At(now.Add(time.Hour))
	var out *OutsideError
	if !errors.As(err, &out) || !strings.Contains(err.Error(), "is in the future") || strings.Contains(err.Error(), "disk") {
		t.Fatalf("an hour ahead: %v, want 'is in the future'", err)
	}
	if res, err := rd.At(now); err != nil || res.Snap == nil {
		t.Fatalf("now itself: %v", err)
	}
}

// TestHeldAndDamaged: a moment after the damage in the last segment, while
// a recorder holds the directory, lacks the rest of that segment, said as
// damage; not as a recorder that is not writing (a full disk?), which sent
// an operator after a disk that was fine.
func TestHeldAndDamaged(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(9, 5)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var last *model.Snapshot
	for range 40 {
		last = node.step()
		rec.Observe(last)
		rec.Flush()
	}
	// The live tail file, as the tour damaged it beside a running serve.
	segs, _ := listSegments(dir)
	seg := segs[len(segs)-1]
	seg.Path = strings.TrimSuffix(seg.Path, filepath.Ext(seg.Path)) + ".fgt"
	b, err := os.ReadFile(seg.Path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) * 4 / 5; i < len(b)*4/5+8; i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(seg.Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustAt(t, dir, last.Time.Add(time.Minute))
	if res.Exact || len(res.Missing) == 0 {
		t.Fatalf("after the damage: exact %v, missing %v", res.Exact, res.Missing)
	}
	for _, m := range res.Missing {
		if strings.Contains(m.Why, "not writing") {
			t.Errorf("missing %q: the damage read as a recorder not writing", m.Why)
		}
	}
	if !strings.Contains(res.Missing[0].Why, "seg-") || !strings.Contains(res.Missing[0].Why, "lost") {
		t.Errorf("missing %v: want the damaged segment named first", res.Missing)
	}
}

// mustHistory is the record in dir's History(f), failing t on an error.
func mustHistory(t *testing.T, dir string, f Filter) *HistoryResult {
	t.Helper()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.History(f)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
