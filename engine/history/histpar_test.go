package history

import (
	"cmp"
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// messyRecord records node in two runs with a pause between, segments
// of 20 s, and then damages it: a corrupt segment, a deleted one, the
// first run's last segment cut short (a kill) and the last segment torn.
func messyRecord(t *testing.T, seed uint64) (string, []seen) {
	t.Helper()
	dir := t.TempDir()
	node := newSynth(seed, 60)
	opts := Options{CheckpointEvery: 20 * time.Second}
	got := recordSynth(t, dir, node, 150, 3, opts)
	first, _ := listSegments(dir)
	node.t = node.t.Add(5 * time.Minute)
	got = append(got, recordSynth(t, dir, node, 150, 2, opts)...)
	segs, _ := listSegments(dir)
	if len(first) < 6 || len(segs) < len(first)+6 {
		t.Fatalf("%d segments, %d in the first run", len(segs), len(first))
	}
	damage := func(path string, f func([]byte) []byte) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	damage(first[2].Path, func(b []byte) []byte {
		for i := len(b) * 2 / 3; i < len(b)*2/3+8; i++ {
			b[i] ^= 0x5a
		}
		return b
	})
	damage(first[len(first)-1].Path, func(b []byte) []byte { return b[:len(b)-len(b)/4] })
	damage(segs[len(segs)-1].Path, func(b []byte) []byte { return b[:len(b)-7] })
	if err := os.Remove(segs[len(first)+3].Path); err != nil {
		t.Fatal(err)
	}
	return dir, got
}

// sortedIntervals orders intervals by everything they print, so that two
// results equal but for the order of ties compare equal.
func sortedIntervals(ivs []Interval) []Interval {
	out := slices.Clone(ivs)
	key := func(iv Interval) string {
		return fmt.Sprintf("%d %s %s %d %v %v %v %s %s %s %s %v", iv.From.UnixNano(), iv.Device, iv.Kernel, iv.To.UnixNano(),
			iv.Since, iv.Open, iv.Gone, iv.Agent, iv.Session, iv.User, iv.Project, iv.Amounts)
	}
	slices.SortFunc(out, func(a, b Interval) int { return cmp.Compare(key(a), key(b)) })
	return out
}

// The parallel walk answers what the sequential one does, for every kind
// of query, over a record with gaps, damage and a torn end.
func TestHistoryParallelMatchesSequential(t *testing.T) {
	for _, seed := range []uint64{3, 4} {
		dir, got := messyRecord(t, seed)
		rd, err := OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		all, err := rd.historySeq(Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Missing) < 3 || len(all.Intervals) < 50 {
			t.Fatalf("seed %d: %d intervals, missing %v", seed, len(all.Intervals), all.Missing)
		}
		iv := all.Intervals[len(all.Intervals)/2]
		mid := got[len(got)/2].snap.Time
		filters := []Filter{
			{}, {Device: "cuda:3"}, {Device: "5"}, {Device: "cuda:9"},
			{Kernel: string(iv.Kernel)}, {Kernel: string(iv.Kernel)[:6]}, {User: iv.User},
			{Device: "cuda:3", Since: mid}, {Device: "cuda:3", Until: mid},
			{Device: "cuda:2", Since: got[100].snap.Time, Until: got[200].snap.Time},
			{User: iv.User, Since: mid}, {Device: "cuda:1", Since: got[len(got)-1].snap.Time.Add(time.Hour)},
		}
		// Owners whose kernels pass to another owner: a user query
		// follows such a kernel on, where a segment's own walk from its
		// checkpoint does not (the join walks those segments again).
		owner := map[model.KernelID]string{}
		passed := 0
		for _, s := range got {
			for _, k := range s.snap.Kernels() {
				if o, ok := owner[k.ID]; ok && o != k.Record.OwnerUserID && passed < 4 {
					filters = append(filters, Filter{User: o})
					passed++
				}
				owner[k.ID] = k.Record.OwnerUserID
			}
		}
		for _, f := range filters {
			want, err := rd.historySeq(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{2, 3, 8} {
				res := rd.historyPar(f, workers)
				name := fmt.Sprintf("seed %d, %+v, %d workers", seed, f, workers)
				if !reflect.DeepEqual(sortedIntervals(res.Intervals), sortedIntervals(want.Intervals)) {
					t.Fatalf("%s: %d intervals, sequential %d", name, len(res.Intervals), len(want.Intervals))
				}
				if !reflect.DeepEqual(res.Missing, want.Missing) && !sameMissing(res.Missing, want.Missing) {
					t.Fatalf("%s: missing %v, sequential %v", name, res.Missing, want.Missing)
				}
				if !res.From.Equal(want.From) || !res.To.Equal(want.To) || len(res.Partitions) != len(want.Partitions) {
					t.Fatalf("%s: span %s-%s, sequential %s-%s", name, res.From, res.To, want.From, want.To)
				}
			}
		}
	}
}

// sameMissing compares the stretches but for the end of one that runs to
// now (an unreadable last segment).
func sameMissing(a, b []Missing) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].From.Equal(b[i].From) || a[i].Why != b[i].Why || !a[i].To.Equal(b[i].To) && time.Since(a[i].To) > time.Minute {
			return false
		}
	}
	return true
}

// Across rotations, every recorded snapshot's holders (with their owner,
// session and agent) are what History says held each device then: the snapshot a recorder rotates at is
// written only as the next segment's checkpoint, and its changes count.
func TestHistoryAcrossRotationsMatchesLive(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(5, 40)
	got := recordSynth(t, dir, node, 240, 3, Options{CheckpointEvery: 20 * time.Second})
	if segs, _ := listSegments(dir); len(segs) < 10 {
		t.Fatalf("%d segments", len(segs))
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rd.History(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Missing) > 0 {
		t.Fatalf("missing %v", res.Missing)
	}
	checked := 0
	for _, s := range got {
		held := map[string]string{}
		for _, k := range s.snap.Kernels() {
			for id, v := range k.Alloc[model.SlotCUDAShares] {
				held["cuda:"+string(id)+" "+string(k.ID)] = v.String() + " " + k.Record.OwnerUserID + " " + k.Record.SessionID + " " + string(k.Agent)
			}
		}
		covering := map[string]string{}
		for _, iv := range res.Intervals {
			if !s.snap.Time.Before(iv.From) && (s.snap.Time.Before(iv.To) || iv.Open && !s.snap.Time.After(iv.To)) {
				key := iv.Device.String() + " " + string(iv.Kernel)
				if _, dup := covering[key]; dup {
					t.Fatalf("%s: two intervals of %s", s.snap.Time, key)
				}
				covering[key] = iv.Amounts[model.SlotCUDAShares].String() + " " + iv.User + " " + iv.Session + " " + string(iv.Agent)
			}
		}
		if !reflect.DeepEqual(held, covering) {
			for k, v := range held {
				if covering[k] != v {
					t.Errorf("%s holds %s", k, v)
				}
			}
			for k, v := range covering {
				if held[k] != v {
					t.Errorf("history: %s holds %s", k, v)
				}
			}
			t.Fatalf("at %s (seq %d): %d held live, %d by the history", s.snap.Time, s.snap.Seq, len(held), len(covering))
		}
		checked += len(held)
	}
	if checked < 1000 {
		t.Fatalf("checked %d holdings", checked)
	}
}

// appendID reads an id as id does, and a device query's allocations
// read on their bytes are the whole allocations' entries on that device.
func FuzzAppendID(f *testing.F) {
	for _, id := range []string{"5f0d1c2e-7a4b-4c3d-9e8f-0123456789ab", "deadbeef", "i-node01", ""} {
		e := &enc{}
		e.id(id)
		f.Add(e.b)
	}
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{2, 200, 1})
	e := &enc{}
	encodeAlloc(e, model.Allocations{model.SlotCUDAShares: {"0": model.NewDec(5, -1), "1": model.NewDec(1, 0)},
		"cuda.mem": {"0": model.NewDec(1<<30, 0)}, "cpu": {"0": model.NewDec(4, 0)}})
	f.Add(e.b)
	// A slot written twice (the writer never does; CI's fuzzer found the
	// two readers disagreeing on it): the second replaces the first.
	e = &enc{}
	e.uvarint(2)
	for _, id := range []string{"0", "1"} {
		e.str("cuda.shares")
		e.uvarint(1)
		e.str(id)
		e.dec(model.NewDec(1, 0))
	}
	f.Add(e.b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		d1 := dec{b: b}
		want := d1.id()
		d2 := dec{b: b}
		got := d2.appendID([]byte("x"))
		if (d1.err == nil) != (d2.err == nil) {
			t.Fatalf("id error %v, appendID error %v", d1.err, d2.err)
		}
		if d1.err == nil && (string(got) != "x"+want || len(d1.b) != len(d2.b)) {
			t.Fatalf("id %q, appendID %q", want, got[1:])
		}
		d3, d4 := dec{b: b}, dec{b: b}
		all := decodeAlloc(&d3)
		for _, dev := range []string{"cuda:0", "0", "cuda:"} {
			d4 = dec{b: b}
			some := decodeAllocOf(&d4, newDevWant(dev))
			if d3.err != nil || d4.err != nil {
				continue
			}
			w := newDevWant(dev)
			n := 0
			for slot, devs := range all {
				for id, v := range devs {
					if !w.key(model.DeviceKey{Name: slot.DeviceName(), ID: id}) {
						continue
					}
					n++
					if got, ok := some[slot][id]; !ok || !same(got, v) {
						t.Fatalf("%s: %s %s: %v, want %v", dev, slot, id, got, v)
					}
				}
			}
			m := 0
			for _, devs := range some {
				m += len(devs)
			}
			if m != n {
				t.Fatalf("%s: %d entries, want %d", dev, m, n)
			}
		}
	})
}
