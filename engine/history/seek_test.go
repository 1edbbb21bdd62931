package history

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/fgtop/fgtop/model"
)

// TestLargeNodeSeekMatchesLive: on a node large enough for the kernels to
// be decoded in parts (interned, over goroutines), a seek at many moments
// gives the document the live snapshot gave, with one processor and with
// several, across a checkpoint.
func TestLargeNodeSeekMatchesLive(t *testing.T) {
	kernels, steps := parallelDecode+500, 900
	if testing.Short() {
		steps = 300
	}
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	node := newWeekNode(3, kernels, start)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }, MaxSize: 1 << 40,
		CheckpointEvery: time.Duration(steps/2) * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var live []seen
	rng := rand.New(rand.NewPCG(5, 5))
	first := node.snapshot()
	rec.Observe(first)
	rec.Flush()
	live = append(live, seen{first, docOf(t, first)})
	for i := 0; i < steps; i++ {
		s := node.step()
		rec.Observe(s)
		rec.Flush()
		if i == steps-1 || rng.IntN(steps/12) == 0 {
			live = append(live, seen{s, docOf(t, s)})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if segs, _ := listSegments(dir); len(segs) < 2 {
		t.Fatalf("%d segments: the test wants a checkpoint in the middle", len(segs))
	}
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		for _, s := range live {
			res := mustAt(t, dir, s.snap.Time)
			if !res.Exact || len(res.Missing) > 0 {
				t.Fatalf("seq %d: not exact: %v", s.snap.Seq, res.Missing)
			}
			if d := docOf(t, res.Snap); !bytes.Equal(d, s.doc) {
				t.Fatalf("GOMAXPROCS %d, seq %d differs:\n%s", procs, s.snap.Seq, firstDiff(s.doc, d))
			}
		}
		runtime.GOMAXPROCS(old)
	}
	t.Logf("%d moments compared, %d kernels", len(live), kernels)
}

// streamRecords is what a streamIter of piece bytes yields from z.
func streamRecords(z []byte, dec *zstd.Decoder, piece, stopAfter int) (recs []rawRec, err error) {
	// The compressed stream in chunks of a few bytes, as the writer's
	// flushes leave it.
	var cs [][]byte
	for rest := z; len(rest) > 0; {
		n := min(len(rest), 1+len(rest)%97)
		cs = append(cs, rest[:n])
		rest = rest[n:]
	}
	it := newStreamIterSize(cs, dec, piece)
	for len(recs) != stopAfter {
		typ, body, ok := it.next()
		if !ok {
			break
		}
		recs = append(recs, rawRec{typ, append([]byte(nil), body...)})
	}
	it.close()
	dec.Reset(nil)
	return recs, it.err
}

// checkStreamIter: the records the concurrent stream iterator yields from
// a compressed stream (whole, cut anywhere) are those recIter finds in
// the decompressed bytes, up to where those end or stop making sense, at
// any piece size; stopping part way leaves the decoder usable.
func checkStreamIter(t *testing.T, raw []byte, dec *zstd.Decoder, pieces []int) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	z := enc.EncodeAll(raw, nil)
	var want []rawRec
	ri := &recIter{b: raw}
	for {
		typ, body, ok := ri.next()
		if !ok {
			break
		}
		want = append(want, rawRec{typ, body})
	}
	for _, piece := range pieces {
		got, err := streamRecords(z, dec, piece, -1)
		if len(got) != len(want) {
			t.Fatalf("piece %d: %d records, want %d (err %v, recIter's %v)", piece, len(got), len(want), err, ri.err)
		}
		for i := range got {
			if got[i].typ != want[i].typ || !bytes.Equal(got[i].body, want[i].body) {
				t.Fatalf("piece %d: record %d differs", piece, i)
			}
		}
		if (err != nil) != (ri.err != nil && len(ri.b) > 0 && !cutShort(ri.b)) {
			t.Fatalf("piece %d: error %v, recIter's %v", piece, err, ri.err)
		}
		if len(want) > 2 {
			if part, _ := streamRecords(z, dec, piece, 2); len(part) != 2 {
				t.Fatalf("piece %d: stopped after %d records, want 2", piece, len(part))
			}
		}
	}
}

// cutShort: what recIter stopped at is a record cut off by the end of the
// bytes (an end to the stream iterator) rather than a bad length.
func cutShort(b []byte) bool {
	n, k := binary.Uvarint(b)
	return k == 0 || k > 0 && n > 0 && n <= maxRecord && n > uint64(len(b)-k)
}

func TestStreamIterMatchesRecIter(t *testing.T) {
	dir := t.TempDir()
	node := newWeekNode(4, 300, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }, MaxSize: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	rec.Observe(node.snapshot())
	for range 200 {
		rec.Observe(node.step())
		rec.Flush()
	}
	rec.Close()
	segs, _ := listSegments(dir)
	b, err := os.ReadFile(segs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := parseSegment(b, false, dec)
	if err != nil || sd.Damage != "" {
		t.Fatalf("%v %s", err, sd.Damage)
	}
	raw := append(append([]byte(nil), sd.Checkpoint...), sd.Deltas...)
	rng := rand.New(rand.NewPCG(1, 2))
	checkStreamIter(t, raw, dec, []int{1, 3, 64, 4096, streamPiece})
	for range 20 {
		checkStreamIter(t, raw[:rng.IntN(len(raw))], dec, []int{1 + rng.IntN(100), 1 + rng.IntN(20000)})
	}
	// A bad length in the middle.
	bad := append([]byte(nil), raw...)
	copy(bad[len(bad)/2:], []byte{0})
	checkStreamIter(t, bad, dec, []int{5, 4096})
}

// FuzzStreamIter: whatever the decompressed bytes, the stream iterator
// yields recIter's records, at small and large piece sizes.
func FuzzStreamIter(f *testing.F) {
	f.Add([]byte{3, 'T', 1, 2, 2, 'k', 0})
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1})
	dec, err := newDecoder()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Piece size 1 is a channel send a byte: 64 KiB keeps an input
		// well under a second.
		if len(raw) > 1<<16 {
			return
		}
		checkStreamIter(t, raw, dec, []int{1, 7, 1 << 16})
	})
}

// naiveDerive is deriveUsage as it was before the parts: every amount
// added in turn.
func naiveDerive(ks []*model.Kernel) map[model.DeviceKey]*model.DeviceUsage {
	out := map[model.DeviceKey]*model.DeviceUsage{}
	for _, k := range ks {
		counted := map[model.DeviceKey]bool{}
		for slot, devs := range k.Alloc {
			for id, amt := range devs {
				key := model.DeviceKey{Name: slot.DeviceName(), ID: id}
				u := out[key]
				if u == nil {
					u = &model.DeviceUsage{Key: key, Held: model.ResourceSlot{}, ByAgent: map[model.AgentID]model.ResourceSlot{}}
					out[key] = u
				}
				u.Held[slot] = u.Held[slot].Add(amt)
				if u.ByAgent[k.Agent] == nil {
					u.ByAgent[k.Agent] = model.ResourceSlot{}
				}
				u.ByAgent[k.Agent][slot] = u.ByAgent[k.Agent][slot].Add(amt)
				if !counted[key] {
					counted[key] = true
					u.Kernels++
				}
			}
		}
	}
	pruneUsage(out)
	return out
}

// TestDeriveUsageMatchesDecimalSums: the device totals summed from the
// kernels, whole or in parts merged (as decodeKernels sums them), are
// those of adding every amount in turn, digits and exponent.
func TestDeriveUsageMatchesDecimalSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	amounts := []model.Dec{model.MustDec("1"), model.MustDec("-1"), model.MustDec("0"), model.MustDec("0.5"), model.MustDec("2.50"),
		model.MustDec("5E+2"), model.MustDec("68719476736"), model.MustDec("9223372036854775807"), model.MustDec("-9223372036854775808"),
		model.MustDec("12345678901234567890123"), model.MustDec("-0")}
	for round := range 200 {
		var ks []*model.Kernel
		for i := range 1 + rng.IntN(40) {
			al := model.Allocations{}
			for range 1 + rng.IntN(3) {
				slot := model.SlotName([]string{"cpu", "mem", "cuda.shares", "cuda.mem"}[rng.IntN(4)])
				if al[slot] == nil {
					al[slot] = map[model.DeviceID]model.Dec{}
				}
				al[slot][model.DeviceID(fmt.Sprint(rng.IntN(4)))] = amounts[rng.IntN(len(amounts))]
			}
			if rng.IntN(8) == 0 {
				// More devices than a kernel's few looked up in turn.
				for c := range 8 + rng.IntN(12) {
					if al["cpu"] == nil {
						al["cpu"] = map[model.DeviceID]model.Dec{}
					}
					al["cpu"][model.DeviceID(fmt.Sprint(c))] = amounts[rng.IntN(len(amounts))]
					if al["mem"] == nil {
						al["mem"] = map[model.DeviceID]model.Dec{}
					}
					al["mem"][model.DeviceID(fmt.Sprint(c))] = amounts[rng.IntN(len(amounts))]
				}
			}
			ks = append(ks, &model.Kernel{ID: model.KernelID(fmt.Sprint(i)), Agent: model.AgentID(fmt.Sprint("a", rng.IntN(3))), Alloc: al})
		}
		want := naiveDerive(ks)
		whole := deriveUsage(ks, nil)
		cut := rng.IntN(len(ks) + 1)
		var a, b usageSums
		for _, k := range ks[:cut] {
			a.add(k, nil)
		}
		for _, k := range ks[cut:] {
			b.add(k, nil)
		}
		merged := a.finish()
		mergeUsage(merged, b.finish())
		pruneUsage(merged)
		for name, got := range map[string]map[model.DeviceKey]*model.DeviceUsage{"whole": whole, "parts": merged} {
			if g, w := usageString(got), usageString(want); g != w {
				t.Fatalf("round %d, %s:\n got %s\nwant %s", round, name, g, w)
			}
		}
	}
}

func usageString(m map[model.DeviceKey]*model.DeviceUsage) string {
	var lines []string
	for k, u := range m {
		var agents []string
		for a, r := range u.ByAgent {
			agents = append(agents, fmt.Sprintf("%s=%s", a, slotsString(r)))
		}
		slices.Sort(agents)
		lines = append(lines, fmt.Sprintf("%s kernels=%d held=%s by %s", k, u.Kernels, slotsString(u.Held), strings.Join(agents, " ")))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func slotsString(r model.ResourceSlot) string {
	var out []string
	for s, v := range r {
		out = append(out, string(s)+":"+v.String())
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// plainPatched is a kernel's record and patches decoded in turn, nothing
// skipped, nothing interned.
func plainPatched(body []byte, patches [][]byte) (*model.Kernel, error) {
	d := dec{b: body}
	k := decodeKernel(&d)
	if d.err != nil {
		return nil, fmt.Errorf("kernel record: %w", d.err)
	}
	for _, pb := range patches {
		pd := dec{b: pb}
		pd.id()
		decodePatch(&pd, k)
	}
	return k, nil
}

// FuzzDecodePatched: skipping the map fields later patches set again, and
// interning, give the kernel (or the error) that decoding everything in
// turn gives, whatever the bytes of the record and its patches.
func FuzzDecodePatched(f *testing.F) {
	k := &model.Kernel{ID: "0b59124e-5b63-4596-990a-af5bee51230b", Agent: "a", Path: "/p", State: model.KernelOK, Seen: time.Unix(5, 0),
		Alloc:  model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.25"), "1": model.MustDec("1.0")}, "cpu": {"3": model.MustDec("1")}},
		Slots:  model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.25"), "cpu": model.MustDec("1")},
		Record: &model.KernelRecord{SessionID: "s", OwnerUserID: "1035453d-92ac-5cf4-a176-68f83136fb31", OwnerProjectID: "u"}}
	e := enc{}
	encodeKernel(&e, k)
	base := append([]byte(nil), e.b...)
	k2 := *k
	k2.Alloc = model.Allocations{model.SlotCUDAShares: {"2": model.MustDec("0.5")}}
	k2.Slots = model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5")}
	k2.Agent = "b"
	e = enc{}
	encodePatch(&e, &k2, 1<<fAlloc|1<<fSlots|1<<fAgent)
	p1 := append([]byte(nil), e.b...)
	k2.Alloc = model.Allocations{"cpu": {"7": model.MustDec("2")}}
	e = enc{}
	encodePatch(&e, &k2, 1<<fAlloc)
	p2 := append([]byte(nil), e.b...)
	f.Add(base, p1, p2)
	f.Add(base, p2, p1)
	f.Add(base, p1[:len(p1)-2], p2)
	f.Add(base, p2, p1[:len(p1)-1])
	f.Add(base[:len(base)/2], p1, p2)
	f.Add(base, []byte{}, p2)
	// A patch whose agent (before its allocations and slots) does not
	// decode: it sets neither, so the record's must stand.
	bad := append([]byte(nil), p1...)
	bad[1+16+1] = 0x7f
	f.Add(base, bad, p2)
	f.Fuzz(func(t *testing.T, body, a, b []byte) {
		if len(body)+len(a)+len(b) > maxFuzzInput {
			return
		}
		for _, ps := range [][][]byte{nil, {a}, {a, b}, {b, a, b}} {
			want, werr := plainPatched(body, ps)
			got, gerr := decodePatched(body, ps, newInterner())
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("%d patches: error %v, plain %v", len(ps), gerr, werr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d patches:\n got %+v\nwant %+v", len(ps), got, want)
			}
		}
	})
}
