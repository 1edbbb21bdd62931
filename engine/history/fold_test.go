package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// foldNode makes snapshots of a node whose kernels do everything the
// sessions walk must fold: they come without their agent or owner and
// learn them later, hold nothing for a while, grow, shrink and move,
// change owner, leave and come back under the same id.
type foldNode struct {
	rng  *rand.Rand
	ks   map[model.KernelID]*model.Kernel
	gone []model.KernelID
	t    time.Time
	seq  uint64
	next int
}

func newFoldNode(seed uint64) *foldNode {
	n := &foldNode{rng: rand.New(rand.NewPCG(seed, 27)), ks: map[model.KernelID]*model.Kernel{}, t: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	for range 6 {
		n.add()
	}
	return n
}

func (n *foldNode) amt() model.Dec { return model.NewDec(int64(1+n.rng.IntN(4)), -1) }

func (n *foldNode) alloc() model.Allocations {
	a := model.Allocations{}
	switch n.rng.IntN(8) {
	case 0:
		return a // holds nothing
	case 1:
		a[model.SlotCUDAShares] = map[model.DeviceID]model.Dec{} // a slot with no device
		return a
	}
	devs := map[model.DeviceID]model.Dec{}
	for range 1 + n.rng.IntN(2) {
		devs[model.DeviceID(fmt.Sprint(n.rng.IntN(3)))] = n.amt()
	}
	a[model.SlotCUDAShares] = devs
	if n.rng.IntN(2) == 0 {
		a[model.SlotCPU] = map[model.DeviceID]model.Dec{"0": model.NewDec(int64(1+n.rng.IntN(2)), 0)}
	}
	return a
}

// slots is a request: none now and then (a record made before SLOTS
// were kept), else a few slots, one of them zero as the agent writes
// those it was not asked for.
func (n *foldNode) slots() model.ResourceSlot {
	if n.rng.IntN(6) == 0 {
		return nil
	}
	r := model.ResourceSlot{model.SlotCUDAShares: n.amt(), model.SlotMem: model.NewDec(int64(4294967295+n.rng.IntN(3)), 0)}
	if n.rng.IntN(2) == 0 {
		r[model.SlotCPU] = model.NewDec(int64(1+n.rng.IntN(2)), 0)
	} else {
		r[model.SlotCPU] = model.NewDec(0, 0)
	}
	return r
}

// who gives k its recovery record, whose agent may be none (one
// agent.toml does not list there).
func (n *foldNode) who(k *model.Kernel) {
	k.Agent = model.AgentID([]string{"i-a", "i-b", ""}[n.rng.IntN(3)])
	k.Record = &model.KernelRecord{SessionID: fmt.Sprintf("5e55-%d", n.rng.IntN(1000)), OwnerUserID: fmt.Sprintf("user-%d", n.rng.IntN(3))}
	if n.rng.IntN(2) == 0 {
		k.Record.OwnerProjectID = fmt.Sprintf("proj-%d", n.rng.IntN(2))
	}
}

func (n *foldNode) kernel(id model.KernelID) *model.Kernel {
	k := &model.Kernel{ID: id, State: model.KernelOK, Seen: n.t, ModTime: n.t, Alloc: n.alloc(), Slots: n.slots(),
		Path: "/var/lib/backend.ai/scratches/" + string(id) + "/config/resource.txt"}
	if n.rng.IntN(3) > 0 {
		n.who(k)
	} else if n.rng.IntN(2) == 0 {
		// Its scratch root's agent, until its record is read.
		k.Agent = "i-root"
	}
	return k
}

func (n *foldNode) add() {
	id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", n.next))
	n.next++
	n.ks[id] = n.kernel(id)
}

func (n *foldNode) any() *model.Kernel {
	if len(n.ks) == 0 {
		return nil
	}
	ids := make([]model.KernelID, 0, len(n.ks))
	for id := range n.ks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return n.ks[ids[n.rng.IntN(len(ids))]]
}

// step makes a few changes, a second after the last.
func (n *foldNode) step() *model.Snapshot {
	n.t = n.t.Add(time.Second)
	for range 1 + n.rng.IntN(3) {
		k := n.any()
		switch r := n.rng.IntN(12); {
		case r < 2 || k == nil:
			n.add()
		case r < 3:
			delete(n.ks, k.ID)
			n.gone = append(n.gone, k.ID)
		case r < 4 && len(n.gone) > 0:
			i := n.rng.IntN(len(n.gone))
			id := n.gone[i]
			n.gone = slices.Delete(n.gone, i, i+1)
			if n.ks[id] == nil {
				n.ks[id] = n.kernel(id)
			}
		case r < 5:
			c := *k
			c.Alloc = n.alloc()
			if n.rng.IntN(3) == 0 {
				// A new request: a patch of SLOTS with the allocation
				// or, when it holds the same, alone.
				c.Slots = n.slots()
				if n.rng.IntN(2) == 0 {
					c.Alloc = k.Alloc
				}
			}
			n.ks[k.ID] = &c
		case r < 7:
			// Gives part back: not a change.
			c := *k
			c.Alloc = model.Allocations{}
			for slot, devs := range k.Alloc {
				for dev, a := range devs {
					if n.rng.IntN(2) == 0 {
						if c.Alloc[slot] == nil {
							c.Alloc[slot] = map[model.DeviceID]model.Dec{}
						}
						c.Alloc[slot][dev] = a
					}
				}
			}
			n.ks[k.ID] = &c
		case r < 9:
			// One amount moves, on a device it holds.
			c := *k
			c.Alloc = model.Allocations{}
			for slot, devs := range k.Alloc {
				c.Alloc[slot] = map[model.DeviceID]model.Dec{}
				for dev, a := range devs {
					c.Alloc[slot][dev] = a
				}
				for dev := range devs {
					c.Alloc[slot][dev] = n.amt()
					break
				}
			}
			n.ks[k.ID] = &c
		default:
			// Learns who it is, or changes owner.
			c := *k
			n.who(&c)
			n.ks[k.ID] = &c
		}
	}
	n.seq++
	s := &model.Snapshot{Seq: n.seq, Time: n.t, Node: "node01", Source: model.SourceInfo{Kind: "mock", Health: "ok"}}
	ks := make([]*model.Kernel, 0, len(n.ks))
	for _, k := range n.ks {
		ks = append(ks, k)
	}
	s.SetKernels(ks)
	return s
}

// recordFolds records node in runs: rotating every few seconds, some
// runs ending cleanly and some killed, with gaps between them, and a
// partition journal record now and then.
func recordFolds(t *testing.T, dir string, node *foldNode) {
	t.Helper()
	for run := range 2 + node.rng.IntN(3) {
		opts := Options{Dir: dir, CheckpointEvery: time.Duration(3+node.rng.IntN(6)) * time.Second, Clock: func() time.Time { return node.t }}
		rec, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 + node.rng.IntN(40) {
			rec.Observe(node.step())
			if node.rng.IntN(15) == 0 {
				b, _ := json.Marshal(agentconfig.JournalRecord{Time: node.t, Action: "apply"})
				rec.pending = appendRecord(rec.pending, recJournal, b)
			}
			if i%(1+node.rng.IntN(3)) == 0 {
				if err := rec.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if run%2 == 0 {
			rec.Close()
		} else {
			rec.Flush()
			kill(rec)
		}
		node.t = node.t.Add(time.Duration(node.rng.IntN(20)) * time.Second)
	}
}

// foldedRun records the random node of seed run and folds its segments
// in memory, relative ones for odd runs.
func foldedRun(t *testing.T, run int) (*Reader, map[string]*segFold) {
	t.Helper()
	dir := t.TempDir()
	recordFolds(t, dir, newFoldNode(uint64(run)))
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rd, memFolds(t, rd, run%2 == 1)
}

// memFolds folds every segment of rd but the last, in memory; rel: each
// relative to the segment before it where that one rotated into it.
func memFolds(t *testing.T, rd *Reader, rel bool) map[string]*segFold {
	t.Helper()
	out := map[string]*segFold{}
	for i := range len(rd.segs) - 1 {
		if f, ok := memFold(t, rd, i, rel); ok {
			out[rd.segs[i].Path] = f
		}
	}
	return out
}

func memFold(t *testing.T, rd *Reader, i int, rel bool) (*segFold, bool) {
	t.Helper()
	sr := rd.read(i, false)
	if !rel || i == 0 {
		return buildFold(sr, newInterner())
	}
	size, crc, err := segIdentity(rd.segs[i-1].Path)
	if err != nil {
		t.Fatal(err)
	}
	return buildFoldAfter(sr, rd.read(i-1, false), size, crc, newInterner())
}

// foldsOf is a Reader.foldOf of folds, as loadFold takes them.
func foldsOf(folds map[string]*segFold) func(segFile, *segFile) *segFold {
	return func(s segFile, prev *segFile) *segFold {
		f := folds[s.Path]
		if f != nil && f.rel && (prev == nil || !prevIs(f, *prev)) {
			return nil
		}
		return f
	}
}

// sessionsText is everything a SessionsResult says, in order.
func sessionsText(res *SessionsResult) string {
	var b strings.Builder
	for _, s := range res.Sessions {
		var al []string
		for slot, devs := range s.Alloc {
			for dev, a := range devs {
				al = append(al, fmt.Sprintf("%s/%s=%s(e%d)", slot, dev, a, a.Exponent()))
			}
		}
		slices.Sort(al)
		var sl []string
		for _, n := range s.Slots.Names() {
			sl = append(sl, fmt.Sprintf("%s=%s", n, s.Slots[n]))
		}
		fmt.Fprintf(&b, "%s agent=%s who=%s/%s/%s %s..%s since=%v open=%v gone=%v changed=%v alloc=[%s] nilalloc=%v slots=[%s]\n",
			s.Kernel, s.Agent, s.Session, s.User, s.Project, s.From.UTC().Format(time.RFC3339Nano), s.To.UTC().Format(time.RFC3339Nano),
			s.Since, s.Open, s.Gone, s.Changed, strings.Join(al, ","), s.Alloc == nil, strings.Join(sl, ","))
	}
	fmt.Fprintf(&b, "missing %v\nspan %s..%s\npartitions %v\n", res.Missing, res.From.UTC(), res.To.UTC(), res.Partitions)
	return b.String()
}

// foldsAgree compares Sessions over [a, b) walked and with folds, and
// returns how many segments the folds stood for.
func foldsAgree(t *testing.T, what string, rd *Reader, folds map[string]*segFold, a, b time.Time) (int, bool) {
	t.Helper()
	rd.noFolds = true
	want, err := rd.Sessions(a, b)
	rd.noFolds = false
	if err != nil {
		t.Fatal(err)
	}
	rd.foldOf = foldsOf(folds)
	got, err := rd.Sessions(a, b)
	rd.foldOf = nil
	if err != nil {
		t.Fatal(err)
	}
	if w, g := sessionsText(want), sessionsText(got); w != g {
		t.Errorf("%s %s..%s: the folds' sessions differ from the walk's\nwalk:\n%s\nfolds:\n%s", what, a.UTC(), b.UTC(), w, g)
		return got.Folded, false
	}
	return got.Folded, true
}

// TestFoldsAreTheWalk is the differential test of the folds: over many
// random records (late identities, kernels leaving and coming back,
// amounts changing, recorder restarts and kills, gaps, a journal), the
// whole record and spans cut at random points, Sessions joining the
// folds of the segments inside the span gives what walking every segment
// gives, field by field.
func TestFoldsAreTheWalk(t *testing.T) {
	runs := 60
	if testing.Short() {
		runs = 15
	}
	folded, spans := 0, 0
	for run := range runs {
		rd, folds := foldedRun(t, run)
		kind := []string{"absolute", "relative"}[run%2]
		from, to, err := rd.Span()
		if err != nil {
			t.Fatal(err)
		}
		n, ok := foldsAgree(t, fmt.Sprintf("run %d (%s folds), the whole record", run, kind), rd, folds, time.Time{}, time.Time{})
		if !ok || !slotsAreArrivals(t, fmt.Sprintf("run %d", run), rd, time.Time{}, time.Time{}, true) {
			return
		}
		folded += n
		rng := rand.New(rand.NewPCG(uint64(run), 5))
		span := to.Sub(from)
		for range 8 {
			a := from.Add(time.Duration(rng.Int64N(int64(span))) - 2*time.Second)
			b := a.Add(time.Duration(rng.Int64N(int64(span))))
			if rng.IntN(4) == 0 {
				// At a segment's start.
				a = rd.segs[rng.IntN(len(rd.segs))].Start
			}
			n, ok := foldsAgree(t, fmt.Sprintf("run %d (%s folds)", run, kind), rd, folds, a, b)
			if !ok || !slotsAreArrivals(t, fmt.Sprintf("run %d", run), rd, a, b, false) {
				return
			}
			folded += n
			spans++
		}
	}
	if folded < runs*4 {
		t.Errorf("the folds stood for %d segments over %d runs: the test does not exercise them", folded, runs)
	}
	t.Logf("%d runs, %d spans, %d segments taken from folds", runs, spans, folded)
}

// slotsAreArrivals checks, over [a, b), that each session's Slots are
// its kernel's SLOTS in the record's snapshot at its arrival, as snapshot
// --at reads them (for one that began before a, when what it holds at a
// began); some: some session asks something.
func slotsAreArrivals(t *testing.T, what string, rd *Reader, a, b time.Time, some bool) bool {
	t.Helper()
	res, err := rd.Sessions(a, b)
	if err != nil {
		t.Fatal(err)
	}
	withSlots := 0
	for _, s := range res.Sessions {
		at, err := rd.At(s.From)
		if err != nil {
			t.Fatal(err)
		}
		k := at.Snap.Kernel(s.Kernel)
		if k == nil {
			t.Errorf("%s: %s arrived at %s, where the record has no such kernel", what, s.Kernel, s.From)
			return false
		}
		if !slotsIdentical(k.Slots, s.Slots) {
			t.Errorf("%s: %s arrived at %s asking %v; the record has it asking %v then", what, s.Kernel, s.From, s.Slots, k.Slots)
			return false
		}
		if s.Slots != nil {
			withSlots++
		}
	}
	if some && withSlots == 0 {
		t.Errorf("%s: no session asks anything: the check checks nothing", what)
		return false
	}
	return true
}

// TestFoldsDifferentialCanFail: the comparison above sees a fold that
// says a wrong thing (each of the fold's facts dropped in turn): it would
// catch a join rule that loses it.
func TestFoldsDifferentialCanFail(t *testing.T) {
	breaks := map[string]func(e *foldEnt){
		"learnt dropped":         func(e *foldEnt) { e.learnt = identity{} },
		"changes ignored":        func(e *foldEnt) { e.changed, e.conflict, e.held = false, false, nil },
		"departures lost":        func(e *foldEnt) { e.rel = false },
		"gone as not in a gap":   func(e *foldEnt) { e.relGone = !e.relGone },
		"who dropped":            func(e *foldEnt) { e.who = identity{} },
		"pending forgotten":      func(e *foldEnt) { e.pending = false },
		"holding at end forgot":  func(e *foldEnt) { e.holding = false },
		"request dropped":        func(e *foldEnt) { e.firstSlots = nil },
		"head's request dropped": func(e *foldEnt) { e.ck.slots = nil },
		"record at arrival said": func(e *foldEnt) { e.firstBare = false },
	}
	for name, brk := range breaks {
		caught := false
		for run := 0; run < 30 && !caught; run++ {
			rd, folds := foldedRun(t, run)
			for _, f := range folds {
				for i := range f.ents {
					brk(&f.ents[i])
				}
			}
			rd.noFolds = true
			want, err := rd.Sessions(time.Time{}, time.Time{})
			rd.noFolds = false
			if err != nil {
				t.Fatal(err)
			}
			rd.foldOf = foldsOf(folds)
			got, err := rd.Sessions(time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			caught = sessionsText(want) != sessionsText(got)
		}
		if !caught {
			t.Errorf("%s: no run's sessions changed: the differential test would not see it", name)
		}
	}
}

// TestFoldSeesAChangeThatLeavesWithIt: a session begun in one segment
// holds its arrival's amount again in the next (its owner learnt), then
// another amount, and leaves, all inside that segment: the union of what
// it held there lies within its arrival but for the two amounts of one
// device, and only those say it changed (the next checkpoint, which
// would see it again, no longer lists it).
func TestFoldSeesAChangeThatLeavesWithIt(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	rec, err := Open(Options{Dir: dir, CheckpointEvery: 10 * time.Second, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	d := model.MustDec
	k := &model.Kernel{ID: "00000001-0000-4000-8000-000000000000", State: model.KernelOK, Agent: "i-a",
		Alloc: model.Allocations{model.SlotCUDAShares: {"0": d("0.5"), "1": d("0.2")}}}
	other := &model.Kernel{ID: "00000002-0000-4000-8000-000000000000", State: model.KernelOK, Agent: "i-a",
		Alloc: model.Allocations{model.SlotCUDAShares: {"2": d("0.1")}}}
	seq := uint64(0)
	snap := func(ks ...*model.Kernel) {
		seq++
		s := &model.Snapshot{Seq: seq, Time: now, Node: "node01", Source: model.SourceInfo{Kind: "mock", Health: "ok"}}
		s.SetKernels(ks)
		rec.Observe(s)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	snap(k, other)
	for _, step := range []func() *model.Kernel{
		nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, // into the second segment
		func() *model.Kernel {
			c := *k
			c.Record = &model.KernelRecord{SessionID: "5e55-1", OwnerUserID: "u"}
			return &c
		},
		func() *model.Kernel {
			c := *k
			c.Record = &model.KernelRecord{SessionID: "5e55-1", OwnerUserID: "u"}
			c.Alloc = model.Allocations{model.SlotCUDAShares: {"0": d("0.5"), "1": d("0.3")}}
			return &c
		},
	} {
		now = now.Add(time.Second)
		if step != nil {
			k = step()
		}
		snap(k, other)
	}
	now = now.Add(time.Second)
	snap(other) // it leaves
	for range 12 {
		now = now.Add(time.Second)
		snap(other)
	}
	rec.Close()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.segs) < 3 {
		t.Fatalf("%d segments, want 3 or more", len(rd.segs))
	}
	folds := memFolds(t, rd, false)
	// From the second segment's start: the first is walked (the session
	// arrives there), the second taken from its fold.
	from := rd.segs[1].Start.Add(-time.Second)
	n, _ := foldsAgree(t, "a change that leaves with it", rd, folds, from, time.Time{})
	if n == 0 {
		t.Fatal("no segment was taken from its fold")
	}
	rd.foldOf = foldsOf(folds)
	res, err := rd.Sessions(from, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Sessions {
		if s.Kernel == k.ID && !s.Changed {
			t.Errorf("%s: not Changed, though it held 0.3 of cuda 1 after arriving with 0.2", s.Kernel)
		}
	}
}

// TestFoldFilesAreTheWalk: the recorder writes each sealed segment's
// fold beside it; Sessions takes them, and answers as the walk does.
// A fold that is damaged, of another segment, or beside a segment with
// a tail is refused (counted) and its segment walked; a missing one is
// walked; a record made without folds is walked, and WriteFold adds
// them to it. Folds decoded into the entries' buffers the walk hands back
// answer the same.
func TestFoldFilesAreTheWalk(t *testing.T) {
	check := func(what string, rd *Reader, wantUsed, wantRefused int64) {
		t.Helper()
		rd.Folds.Used.Store(0)
		rd.Folds.Refused.Store(0)
		rd.Folds.Reused.Store(0)
		rd.noFolds = true
		want, err := rd.Sessions(time.Time{}, time.Time{})
		rd.noFolds = false
		if err != nil {
			t.Fatal(err)
		}
		got, err := rd.Sessions(time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if w, g := sessionsText(want), sessionsText(got); w != g {
			t.Errorf("%s: the sessions differ\nwalk:\n%s\nfolds:\n%s", what, w, g)
		}
		if u, r := rd.Folds.Used.Load(), rd.Folds.Refused.Load(); u != wantUsed || r != wantRefused || int64(got.Folded) != u {
			t.Errorf("%s: %d folds used, %d refused, %d segments folded; want %d and %d", what, u, r, got.Folded, wantUsed, wantRefused)
		}
		// The read-ahead decodes a segment once the walk has taken the one
		// before the last it sent, so after the walk has joined (and
		// handed back the entries of) the one before that: with four
		// folds used, the fourth is decoded into a buffer handed back.
		if used := rd.Folds.Used.Load(); rd.Folds.Reused.Load() == 0 && used >= 4 {
			t.Errorf("%s: %d folds used, none decoded into a buffer handed back", what, used)
		}
	}
	for run := range 6 {
		dir := t.TempDir()
		node := newFoldNode(uint64(100 + run))
		recordFolds(t, dir, node)
		rd, err := OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		var folded []segFile
		for _, s := range rd.segs {
			if _, err := os.Stat(foldPath(s.Path)); err == nil {
				folded = append(folded, s)
			}
		}
		if len(folded) < 3 {
			t.Fatalf("run %d: %d of %d segments have a fold", run, len(folded), len(rd.segs))
		}
		// Every fold file is the in-memory fold of its segment.
		rels := 0
		for _, s := range folded {
			mem, _ := memFold(t, rd, slices.Index(rd.segs, s), true)
			if mem.rel {
				rels++
			}
			seg, _ := os.ReadFile(s.Path)
			b, _ := os.ReadFile(foldPath(s.Path))
			f, err := parseFold(b, int64(len(seg)), crc32.Checksum(seg, castagnoli), s.Start)
			if err != nil {
				t.Fatalf("%s: %v", foldPath(s.Path), err)
			}
			if !bytes.Equal(encodeFold(f, seg), encodeFold(mem, seg)) {
				t.Errorf("%s: the file's fold is not the segment's", foldPath(s.Path))
			}
		}
		if rels == 0 {
			t.Errorf("run %d: no fold is relative to the segment before", run)
		}
		n := int64(len(folded))
		check(fmt.Sprintf("run %d, as recorded", run), rd, n, 0)
		// Damaged: a byte of its body flipped.
		b, _ := os.ReadFile(foldPath(folded[0].Path))
		b[len(b)-3] ^= 0x40
		os.WriteFile(foldPath(folded[0].Path), b, 0o644)
		// Stale: another segment's fold.
		b1, _ := os.ReadFile(foldPath(folded[1].Path))
		os.WriteFile(foldPath(folded[2].Path), b1, 0o644)
		check(fmt.Sprintf("run %d, one damaged and one stale", run), rd, n-2, 2)
		// Missing.
		os.Remove(foldPath(folded[0].Path))
		check(fmt.Sprintf("run %d, one missing", run), rd, n-2, 1)
		// Beside a segment with a tail.
		os.WriteFile(tailPath(folded[1].Path), nil, 0o644)
		check(fmt.Sprintf("run %d, one beside a tail", run), rd, n-3, 2)
		os.Remove(tailPath(folded[1].Path))
		// Folds added to what lacks them.
		for _, s := range folded {
			if err := WriteFold(s.Path); err != nil {
				t.Fatal(err)
			}
		}
		check(fmt.Sprintf("run %d, folds written again", run), rd, n, 0)
	}
	// A record made without folds is walked.
	dir := t.TempDir()
	rec, err := Open(Options{Dir: dir, CheckpointEvery: 3 * time.Second, NoFolds: true, Clock: func() time.Time { return time.Unix(1e9, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+foldSuffix)); len(m) > 0 {
		t.Errorf("NoFolds wrote %v", m)
	}
}

// foldSeed is a fold of a few kernels, as the recorder writes them.
func foldSeed() *segFold {
	t0 := time.Unix(1_700_000_000, 0)
	fa := flatAlloc{n: 1, ents: []allocEnt{{slot: model.SlotCUDAShares, dev: "0", amt: model.MustDec("0.5"), first: true}}}
	f := &segFold{start: t0, end: t0.Add(time.Minute), clean: true, rotated: true, rotateAt: t0.Add(time.Minute), last: t0.Add(50 * time.Second),
		journal: [][]byte{[]byte(`{"time":"2023-11-14T22:13:20Z","action":"apply"}`)}, inCk: map[model.KernelID]bool{"k1": true}}
	f.ents = []foldEnt{
		{id: "k1", inCk: true, ck: sessHead{kernelHead: kernelHead{ID: "k1", Agent: "i-a", Session: "s"}, fa: fa}, present: true, holding: true,
			first: true, firstAt: t0.Add(time.Second), firstAgent: "i-a", firstFA: fa, held: fa.ents, who: identity{Session: "s"}},
		{id: "k2", first: true, firstAt: t0.Add(2 * time.Second), firstFA: fa, rel: true, relAt: t0.Add(9 * time.Second), learnt: identity{Agent: "i-b", Session: "t"}},
	}
	return f
}

// FuzzFold: a fold body parses or is refused, within its bounds, and
// what parses encodes again to what parses the same; joined onto a walk
// it does not panic.
func FuzzFold(f *testing.F) {
	seg := []byte("a segment")
	full := encodeFold(foldSeed(), seg)
	body, err := foldZ().dec.DecodeAll(full[foldHead:], nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add(body[:len(body)/2])
	// A relative one: a kernel unchanged since the segment before, one
	// gone at the rotation.
	rel := foldSeed()
	rel.rel, rel.prevSize, rel.prevCRC, rel.left, rel.inCk = true, 123, 0xfeedbeef, []model.KernelID{"k0"}, nil
	rel.ents[0].same, rel.ents[0].ck = true, sessHead{}
	rb, err := foldZ().dec.DecodeAll(encodeFold(rel, seg)[foldHead:], nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rb)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		start := time.Unix(1_700_000_000, 0)
		fd, err := parseFoldBody(b, start)
		if err != nil {
			return
		}
		again := encodeFold(fd, seg)
		b2, err := foldZ().dec.DecodeAll(again[foldHead:], nil)
		if err != nil {
			t.Fatal(err)
		}
		fd2, err := parseFoldBody(b2, start)
		if err != nil {
			t.Fatalf("a parsed fold encodes to one that does not parse: %v", err)
		}
		if !bytes.Equal(encodeFold(fd2, seg), again) {
			t.Fatal("a parsed fold does not encode as it parsed")
		}
		sw := &sessWalk{h: &histWalk{in: newInterner()}, heads: map[model.KernelID]*sessTrack{}, sums: map[model.KernelID]*ksum{}}
		sw.startMaps()
		sw.applyFold(fd, start, start, false)
		sw.applyFold(fd, start.Add(time.Minute), start.Add(time.Minute), true)
		sw.endMaps()
	})
}

// TestFoldsBench folds the sealed segments of a record
// (FGTOP_FOLD_BENCH_DIR, e.g. a copy of the bench week) where they lack
// a fold, says what each costs and weighs, and times Sessions over the
// week before FGTOP_FOLD_BENCH_UNTIL (RFC 3339) walked and with folds,
// comparing the two field by field.
func TestFoldsBench(t *testing.T) {
	dir := os.Getenv("FGTOP_FOLD_BENCH_DIR")
	if dir == "" {
		t.Skip("set FGTOP_FOLD_BENCH_DIR to a history directory")
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total, segBytes int64
	var worst time.Duration
	for i, s := range rd.segs {
		segBytes += s.Size
		if i == len(rd.segs)-1 {
			continue
		}
		if _, err := os.Stat(foldPath(s.Path)); err != nil {
			t0 := time.Now()
			if err := WriteFold(s.Path); err != nil {
				t.Fatal(err)
			}
			worst = max(worst, time.Since(t0))
		}
		if fi, err := os.Stat(foldPath(s.Path)); err == nil {
			total += fi.Size()
		}
	}
	t.Logf("segments %.1f MiB, folds %.2f MiB (%d segments), the slowest fold written in %v", float64(segBytes)/(1<<20), float64(total)/(1<<20), len(rd.segs)-1, worst)
	var until time.Time
	if u := os.Getenv("FGTOP_FOLD_BENCH_UNTIL"); u != "" {
		if until, err = time.Parse(time.RFC3339, u); err != nil {
			t.Fatal(err)
		}
	}
	since := until.Add(-7 * 24 * time.Hour)
	if until.IsZero() {
		since = time.Time{}
	}
	for round := range 2 {
		rd.noFolds = true
		c0, t0 := cpuTime(), time.Now()
		want, err := rd.Sessions(since, until)
		if err != nil {
			t.Fatal(err)
		}
		wall, cpu := time.Since(t0), cpuTime()-c0
		rd.noFolds = false
		c1, t1 := cpuTime(), time.Now()
		got, err := rd.Sessions(since, until)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d sessions; walked %v wall %v CPU; with folds (%d segments) %v wall %v CPU", round+1, len(want.Sessions), wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
			got.Folded, time.Since(t1).Round(time.Millisecond), (cpuTime() - c1).Round(time.Millisecond))
		if round == 0 && sessionsText(want) != sessionsText(got) {
			t.Fatal("the sessions with folds differ from the walk's")
		}
	}
}

// TestRecorderRefoldsOldFolds: a record whose sealed segments have no
// fold, or one made by an older version's rules (another magic), gets
// this version's folds when a recorder opens it, off its loop; the
// readers then take them and answer as the walk does.
func TestRecorderRefoldsOldFolds(t *testing.T) {
	dir := t.TempDir()
	node := newFoldNode(3)
	recordFolds(t, dir, node)
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	sealed := 0
	for i, sf := range segs {
		fp := foldPath(sf.Path)
		b, err := os.ReadFile(fp)
		if err != nil {
			continue
		}
		sealed++
		if i%2 == 0 {
			os.Remove(fp)
			continue
		}
		copy(b, "FGHFOLD1")
		if err := os.WriteFile(fp, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if sealed < 3 {
		t.Fatalf("only %d sealed segments with folds: the test needs more", sealed)
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rd.Sessions(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Folded != 0 {
		t.Fatalf("%d old or missing folds were used", want.Folded)
	}
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	// Close stops the refolding between segments: it is waited for
	// here, as a recorder that runs on gives it the time.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		current := 0
		for _, sf := range segs {
			if foldCurrent(foldPath(sf.Path)) {
				current++
			}
		}
		if current >= sealed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sealed segments refolded after 20 s", current, sealed)
		}
	}
	rec.Close()
	rd, err = OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rd.Sessions(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Folded < sealed-1 || rd.Folds.Refused.Load() != 0 {
		t.Errorf("after the recorder opened the record, %d of %d sealed segments were taken from folds, %d folds refused", got.Folded, sealed, rd.Folds.Refused.Load())
	}
	if w, g := sessionsText(want), sessionsText(got); w != g {
		t.Errorf("the new folds' sessions differ from the walk's\nwalk:\n%s\nfolds:\n%s", w, g)
	}
}

// TestRefoldPassesAFIFOBy: a FIFO planted where a segment's fold goes
// does not hold the recorder's start (it was opened to read its magic).
func TestRefoldPassesAFIFOBy(t *testing.T) {
	dir := t.TempDir()
	node := newFoldNode(5)
	recordFolds(t, dir, node)
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	fifo := foldPath(segs[0].Path)
	os.Remove(fifo)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
		if err == nil {
			rec.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the recorder did not start with a FIFO where a fold goes")
	}
}

// TestFoldSlabsUsedAgain: a fold decoded with the room of one the walk
// joined before (foldBuf, cleared as foldStep hands it back) takes its
// allocations' entries from that fold's slabs, and reads the same as one
// decoded into fresh room.
func TestFoldSlabsUsedAgain(t *testing.T) {
	dir := t.TempDir()
	recordFolds(t, dir, newFoldNode(100))
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, s := range rd.segs {
		b, err := os.ReadFile(foldPath(s.Path))
		if err != nil {
			continue
		}
		seg, _ := os.ReadFile(s.Path)
		size, crc := int64(len(seg)), crc32.Checksum(seg, castagnoli)
		joined, err := parseFold(b, size, crc, s.Start)
		if err != nil {
			t.Fatal(err)
		}
		if len(joined.slabs) == 0 {
			continue
		}
		tried++
		clear(joined.ents)
		for _, sl := range joined.slabs {
			clear(sl[:cap(sl)])
		}
		first := &joined.slabs[0][:1][0]
		again, err := parseFoldInto(b, size, crc, s.Start, foldBuf{ents: joined.ents[:0], slabs: joined.slabs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := parseFold(b, size, crc, s.Start)
		if !reflect.DeepEqual(again.ents, fresh.ents) {
			t.Errorf("%s: the fold decoded into the room handed back reads otherwise than into fresh room", filepath.Base(s.Path))
		}
		used := false
		for _, sl := range again.slabs {
			if cap(sl) > 0 && &sl[:1][0] == first {
				used = true
			}
		}
		if !used {
			t.Errorf("%s: the allocations' entries were decoded into fresh slabs, not the %d handed back", filepath.Base(s.Path), len(joined.slabs))
		}
	}
	if tried == 0 {
		t.Fatal("no fold with allocations' entries")
	}
}
