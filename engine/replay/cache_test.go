package replay

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestRecordCacheShares: readers of one directory and span within the
// age they ask for get the one record read (one read, however many ask
// at once); an older one is read again; a failed read is not kept; the
// cache holds at most its bound.
func TestRecordCacheShares(t *testing.T) {
	var loads atomic.Int32
	fail := map[string]bool{}
	var failMu sync.Mutex
	c := NewRecordCache(2)
	c.load = func(dir string, from, to time.Time) (*Record, error) {
		loads.Add(1)
		time.Sleep(20 * time.Millisecond) // readers arrive while it reads
		failMu.Lock()
		defer failMu.Unlock()
		if fail[dir] {
			return nil, errors.New("no record yet")
		}
		return &Record{From: from, To: to, Node: dir}, nil
	}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const age = 5 * time.Minute
	var wg sync.WaitGroup
	got := make([]*Record, 8)
	for i := range got {
		wg.Go(func() {
			rec, _, err := c.Get("d1", ReplaySpanForTest, age, now.Add(time.Duration(i)*time.Second))
			if err != nil {
				t.Error(err)
			}
			got[i] = rec
		})
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] || got[i] == nil {
			t.Fatalf("reader %d got %p, reader 0 %p: not one record", i, got[i], got[0])
		}
	}
	// Readers all started within a second of each other; any that came
	// after the read began waited for it.
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d reads for 8 readers at once", n)
	}
	// Whichever reader asked first read it, up to its moment.
	first := got[0].To
	rec, at, _ := c.Get("d1", ReplaySpanForTest, age, first.Add(age-time.Second))
	if rec != got[0] || !at.Equal(first) {
		t.Fatalf("within its age: %p read up to %s, want %p up to %s", rec, at, got[0], first)
	}
	if rec, _, _ := c.Get("d1", ReplaySpanForTest, age, first.Add(age)); rec == got[0] || loads.Load() != 2 {
		t.Fatalf("at its age: the old record again (%d reads)", loads.Load())
	}
	failMu.Lock()
	fail["d2"] = true
	failMu.Unlock()
	for range 2 {
		if _, _, err := c.Get("d2", ReplaySpanForTest, age, now.Add(age)); err == nil {
			t.Fatal("a failed read said nothing")
		}
	}
	if n := loads.Load(); n != 4 {
		t.Fatalf("%d reads: a failed read was kept", n)
	}
	for i := range 5 {
		c.Get(fmt.Sprintf("e%d", i), ReplaySpanForTest, age, now.Add(age+time.Duration(i)*time.Second))
	}
	if c.Len() > 2 {
		t.Fatalf("%d records held, over the bound of 2", c.Len())
	}
}

// ReplaySpanForTest is the editor's span.
const ReplaySpanForTest = 7 * 24 * time.Hour

// TestSharedRecordRunsConcurrently: one record read from a real week and
// given to several readers replays the same under each at once (run it
// with -race: no run writes into the shared record).
func TestSharedRecordRunsConcurrently(t *testing.T) {
	w := scriptedWeek(t)
	w.reader() // closes the recorder
	c := NewRecordCache(RecordsMax)
	now := w.base.Add(7 * 24 * time.Hour)
	a, _, err := c.Get(w.dir, ReplaySpanForTest, time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := c.Get(w.dir, ReplaySpanForTest, time.Minute, now.Add(time.Second))
	if err != nil || a != b {
		t.Fatalf("two readers: %p and %p (%v)", a, b, err)
	}
	part := Fixed(given(a, map[model.AgentID]string{agentA: "2.0", agentB: "1.0"}))
	want := fmt.Sprintf("%+v", *Run(a, part, Options{}))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			Run(a, a.AsItWas(), Options{Fidelity: true})
			if got := fmt.Sprintf("%+v", *Run(a, part, Options{})); got != want {
				t.Errorf("a concurrent run differs:\n%s\nwant\n%s", got, want)
			}
			Suggest(a, SuggestInput{Today: given(a, nil), Total: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("4")}})
		})
	}
	wg.Wait()
}

// TestRecordCacheLetsGo: a record leaves the cache age after its read,
// and nothing of the cache holds it then: the console's editor opened
// once must not keep a busy node's week for the life of the process.
func TestRecordCacheLetsGo(t *testing.T) {
	c := NewRecordCache(RecordsMax)
	c.load = func(dir string, from, to time.Time) (*Record, error) {
		return &Record{From: from, To: to, Node: dir, Sessions: make([]Session, 1000)}, nil
	}
	var freed atomic.Bool
	func() {
		// An age long enough that a slow machine still finds it kept
		// right after the read.
		rec, _, err := c.Get("d1", ReplaySpanForTest, time.Second, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		runtime.AddCleanup(rec, func(b *atomic.Bool) { b.Store(true) }, &freed)
	}()
	if c.Len() != 1 {
		t.Fatalf("%d records kept right after the read", c.Len())
	}
	deadline := time.Now().Add(10 * time.Second)
	for !freed.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("the record is still held 10 s after its age of 1 s (%d kept)", c.Len())
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if c.Len() != 0 {
		t.Fatalf("%d records kept after their age", c.Len())
	}
}

// TestRecordCacheOfNone: a cache made with a bound below one keeps the
// record being read (it looped for ever looking for another to evict).
func TestRecordCacheOfNone(t *testing.T) {
	for _, max := range []int{0, -3} {
		c := NewRecordCache(max)
		c.load = func(dir string, from, to time.Time) (*Record, error) {
			return &Record{From: from, To: to, Node: dir}, nil
		}
		done := make(chan error, 1)
		go func() {
			now := time.Now()
			_, _, err := c.Get("d1", ReplaySpanForTest, time.Minute, now)
			if err == nil {
				_, _, err = c.Get("d2", ReplaySpanForTest, time.Minute, now)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("NewRecordCache(%d): Get has not returned in 5 s", max)
		}
		if c.Len() != 1 {
			t.Fatalf("NewRecordCache(%d) holds %d records, want 1", max, c.Len())
		}
	}
}

// TestRecordCacheYoungRecord: a record holding less than the span asked
// (a recorder that started seconds ago) stands in for a fresh read a
// tenth of what it holds (at least minKeep), not the whole age: the
// editor judged drafts and S suggested amounts from a record's first 15
// s for five minutes. A record holding the span is kept the whole age.
func TestRecordCacheYoungRecord(t *testing.T) {
	var loads atomic.Int32
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := NewRecordCache(2)
	c.load = func(dir string, from, to time.Time) (*Record, error) {
		loads.Add(1)
		if from.Before(start) {
			from = start // the record began at start
		}
		return &Record{From: from, To: to, Node: dir}, nil
	}
	const age = 5 * time.Minute
	now := start.Add(15 * time.Second)
	first, _, _ := c.Get("d", ReplaySpanForTest, age, now)
	if got := KeepFor(first, ReplaySpanForTest, age); got != minKeep {
		t.Fatalf("15 s of record kept %v, want %v", got, minKeep)
	}
	if rec, _, _ := c.Get("d", ReplaySpanForTest, age, now.Add(minKeep-time.Second)); rec != first {
		t.Fatal("a young record was read again within its keep")
	}
	later, _, _ := c.Get("d", ReplaySpanForTest, age, now.Add(minKeep+time.Second))
	if later == first || loads.Load() != 2 {
		t.Fatalf("a 15 s record stood in for a fresh read %v later (%d reads)", minKeep+time.Second, loads.Load())
	}
	if held := later.To.Sub(later.From); held != 15*time.Second+minKeep+time.Second {
		t.Fatalf("the read again holds %v", held)
	}
	// An hour of record: a tenth is six minutes, cut to the age.
	hour := &Record{From: start, To: start.Add(time.Hour)}
	if got := KeepFor(hour, ReplaySpanForTest, age); got != age {
		t.Errorf("an hour of record kept %v, want %v", got, age)
	}
	if got := KeepFor(&Record{From: start, To: start.Add(20 * time.Minute)}, ReplaySpanForTest, age); got != 2*time.Minute {
		t.Errorf("20 min of record kept %v, want 2m", got)
	}
	full := &Record{From: start, To: start.Add(ReplaySpanForTest)}
	if got := KeepFor(full, ReplaySpanForTest, age); got != age {
		t.Errorf("the whole span kept %v, want %v", got, age)
	}
}
