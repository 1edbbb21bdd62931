package engine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// sameContent reports whether two snapshots are deeply equal but for
// Seq, Time and Gen.
func sameContent(a, b *model.Snapshot) bool {
	x, y := *a, *b
	x.Seq, x.Time, x.Gen, y.Seq, y.Time, y.Gen = 0, time.Time{}, 0, 0, time.Time{}, 0
	return reflect.DeepEqual(x, y) && reflect.DeepEqual(a.Kernels(), b.Kernels())
}

// TestSameReadingRetimes: a poll that reads what the last one read
// publishes the last content at the new time with the same Gen (equal
// JSON but for Seq and Time); a changed reading, a kernel crossing its
// idle mark by time alone and a reading after a failed poll each give a
// new Gen.
func TestSameReadingRetimes(t *testing.T) {
	root, opts := fixtureTree(t)
	proc := t.TempDir()
	if err := os.WriteFile(filepath.Join(proc, "uptime"), []byte("1000.00 1.00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeProc(t, proc, 100, "python3", 500, "0::/system.slice/docker-"+cidB+".scope\n")
	src := &procSource{Source: opts.Inventory, reader: inventory.NewProcessReader(proc), procs: map[model.DeviceID][]inventory.RawProcess{
		gpu04: {{PID: 100, UsedMem: model.Some[uint64](2 << 30), SMUtil: model.Some[uint32](0)}},
	}}
	opts.Inventory = src
	now := time.Unix(1700000000, 0)
	opts.Clock = func() time.Time { return now }
	opts.IdleAfter = 10 * time.Second
	built, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	st := newState(&opts)
	st.takeInventory(src.Poll(context.Background()))
	for _, k := range built.Kernels() {
		st.upsertKernel(kernelRead{root: root, id: k.ID, path: k.Path, spec: specOf(t, k.Path), mod: k.ModTime})
	}
	first := st.snapshot()
	if first.Gen == 0 {
		t.Fatal("the engine's snapshot has no Gen")
	}
	poll := func() *model.Snapshot {
		t.Helper()
		now = now.Add(time.Second)
		inv, err := src.Poll(context.Background())
		if st.sameReading(inv, err) {
			return st.retimed()
		}
		st.takeInventory(inv, err)
		return st.snapshot()
	}
	s := poll()
	if s.Gen != first.Gen || s.Seq != first.Seq+1 || !s.Time.Equal(now) {
		t.Fatalf("same reading: gen %d seq %d time %v, want gen %d seq %d time %v", s.Gen, s.Seq, s.Time, first.Gen, first.Seq+1, now)
	}
	if !sameContent(first, s) {
		t.Fatal("a retimed snapshot's content differs")
	}
	// It is what the full path builds from the same reading.
	st.takeInventory(src.Poll(context.Background()))
	if full := st.snapshot(); !sameContent(s, full) || full.Gen == s.Gen {
		t.Fatalf("the full snapshot of the same reading differs (%v) or kept the gen (%v)", !sameContent(s, full), full.Gen == s.Gen)
	}
	first = st.last
	// Time alone crosses B's idle mark (at 0 % since the first poll).
	for now.Sub(time.Unix(1700000000, 0)) < 9*time.Second {
		if s = poll(); s.Gen != first.Gen {
			t.Fatalf("at %v: new gen before the idle mark", now)
		}
	}
	s = poll()
	if s.Gen == first.Gen || s.IdleKernels == 0 || !s.Kernel(kernelB).Use.Idle {
		t.Fatalf("idle mark crossed: gen %d (first %d), idle kernels %d", s.Gen, first.Gen, s.IdleKernels)
	}
	idle := s
	if s = poll(); s.Gen != idle.Gen {
		t.Fatal("no change after the idle mark, yet a new gen")
	}
	// A reading changes.
	src.procs[gpu04][0].UsedMem = model.Some[uint64](3 << 30)
	if s = poll(); s.Gen == idle.Gen {
		t.Fatal("process memory changed, same gen")
	}
	moved := s
	// A failed poll, then the same reading as before it: both news.
	st.takeInventory(nil, os.ErrDeadlineExceeded)
	failed := st.snapshot()
	if failed.Gen == moved.Gen || len(failed.Issues) == len(moved.Issues) {
		t.Fatalf("failed poll: gen %d (before %d), issues %d (before %d)", failed.Gen, moved.Gen, len(failed.Issues), len(moved.Issues))
	}
	if s = poll(); s.Gen == failed.Gen || len(s.Issues) != len(moved.Issues) {
		t.Fatalf("reading back after a failure: gen %d (failed %d), issues %d, want %d", s.Gen, failed.Gen, len(s.Issues), len(moved.Issues))
	}
}

// runningEngine runs an engine on opts until the test ends or stop is
// called; stop returns what Run returned.
func runningEngine(t *testing.T, opts Options) (e *Engine, ch <-chan *model.Snapshot, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e = New(opts)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	ch = e.Subscribe(ctx)
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return e, ch, stop
}

// nextSnapshot is the next snapshot on ch, within 10 s.
func nextSnapshot(t *testing.T, ch <-chan *model.Snapshot) *model.Snapshot {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot within 10 s")
		return nil
	}
}

// TestRunPublishesSameGenAtRest: the running engine, polling a source
// whose readings hold still, publishes one content under one Gen at
// newer times; a reading that moves gets a new Gen.
func TestRunPublishesSameGenAtRest(t *testing.T) {
	_, opts := fixtureTree(t)
	opts.Clock = time.Now
	opts.PollEvery = 5 * time.Millisecond
	src := &stepSource{Source: opts.Inventory}
	opts.Inventory = src
	e, ch, stop := runningEngine(t, opts)
	<-e.Ready()
	next := func() *model.Snapshot { t.Helper(); return nextSnapshot(t, ch) }
	// Past the first scan's snapshots (the scan, the records read after
	// it), at rest: six in a row of one content. Two in a row are not
	// enough: a poll can come between the scan's batches, and the batch
	// after it is a full snapshot, of a new Gen, even when it changes
	// nothing (one run in a few hundred under -race).
	s := next()
	gen, seq, run := s.Gen, s.Seq, 1
	for tries := 0; run < 6; tries++ {
		if tries > 500 {
			t.Fatalf("no six snapshots in a row of one Gen in 500: the engine does not hold its Gen at rest")
		}
		s = next()
		if s.Seq <= seq {
			t.Fatalf("seq %d after seq %d", s.Seq, seq)
		}
		if s.NumKernels() != 3 || s.Gen != gen {
			gen, run = s.Gen, 0
		}
		seq = s.Seq
		run++
	}
	src.temp.Store(41)
	for s = next(); s.Gen == gen; s = next() {
	}
	if tc := s.Devices[0].Telemetry; tc == nil || tc.TempC != model.Some[uint32](41) {
		t.Fatalf("the new gen does not carry the new reading: %+v", s.Devices[0].Telemetry)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// stepSource reads its source and gives the first device a temperature
// of temp (40 until set), so a test can move one reading.
type stepSource struct {
	inventory.Source
	temp atomic.Uint32
}

func (p *stepSource) Poll(ctx context.Context) (*inventory.Inventory, error) {
	inv, err := p.Source.Poll(ctx)
	if err != nil {
		return nil, err
	}
	out := *inv
	out.Devices = append([]model.Device(nil), inv.Devices...)
	c := uint32(40)
	if v := p.temp.Load(); v != 0 {
		c = v
	}
	var tel model.Telemetry
	if t := out.Devices[0].Telemetry; t != nil {
		tel = *t
	}
	tel.TempC = model.Some(c)
	out.Devices[0].Telemetry = &tel
	return &out, nil
}

func TestNextPoll(t *testing.T) {
	ph := time.Unix(1000, 250_000_000)
	for _, c := range []struct {
		now  time.Time
		want time.Time
	}{
		{time.Unix(999, 0), ph},   // the phase is ahead: then
		{ph, ph.Add(time.Second)}, // on it: the next
		{time.Unix(1003, 100_000_000), time.Unix(1003, 250_000_000)}, // before this second's
		{time.Unix(1003, 900_000_000), time.Unix(1004, 250_000_000)}, // after it
	} {
		if got := nextPoll(ph, c.now, time.Second); !got.Equal(c.want) {
			t.Errorf("nextPoll(%v, %v) = %v, want %v", ph, c.now, got, c.want)
		}
	}
}

// timedSource records when it is polled.
type timedSource struct {
	inventory.Source
	mu sync.Mutex
	at []time.Time
}

func (p *timedSource) Poll(ctx context.Context) (*inventory.Inventory, error) {
	p.mu.Lock()
	p.at = append(p.at, time.Now())
	p.mu.Unlock()
	return p.Source.Poll(ctx)
}

// TestAlignPoll: after AlignPoll(phase) the polls come at phase plus
// whole periods (measured at half a period from where they were).
func TestAlignPoll(t *testing.T) {
	_, opts := fixtureTree(t)
	const every = 200 * time.Millisecond
	opts.PollEvery = every
	src := &timedSource{Source: opts.Inventory}
	opts.Inventory = src
	e, ch, stop := runningEngine(t, opts)
	go func() {
		for range ch {
		}
	}()
	<-e.Ready()
	src.mu.Lock()
	n := len(src.at)
	src.mu.Unlock()
	// Half a period from the polls' own phase: the furthest they can be.
	time.Sleep(every / 4)
	src.mu.Lock()
	last := src.at[len(src.at)-1]
	src.mu.Unlock()
	phase := last.Add(every / 2)
	e.AlignPoll(phase)
	deadline := time.Now().Add(20 * time.Second)
	for {
		src.mu.Lock()
		k := len(src.at) - n
		src.mu.Unlock()
		if k >= 8 || time.Now().After(deadline) {
			break
		}
		time.Sleep(every)
	}
	_ = stop()
	src.mu.Lock()
	defer src.mu.Unlock()
	var offs []time.Duration
	for _, at := range src.at {
		if at.After(phase) {
			offs = append(offs, at.Sub(phase)%every)
		}
	}
	if len(offs) < 5 {
		t.Fatalf("%d polls after the phase", len(offs))
	}
	slices.Sort(offs)
	// A poll is late by the scheduler's delay, never early; the median
	// is within a quarter period of the phase (it was half a period off).
	if med := offs[len(offs)/2]; med > every/4 {
		t.Errorf("polls %v after the phase (mod %v): not on it", offs, every)
	}
}
