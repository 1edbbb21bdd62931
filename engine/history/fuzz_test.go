package history

import (
	"os"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// maxFuzzInput bounds what the fuzz targets feed the parsers (a segment
// is read whole; the record bounds are tested, not the machine's memory).
const maxFuzzInput = 1 << 20

// FuzzSegment feeds arbitrary bytes to the segment parser and the replay:
// whatever the bytes, the reader answers or says what is wrong, and never
// panics or allocates beyond the format's bounds.
func FuzzSegment(f *testing.F) {
	dir := f.TempDir()
	rec, err := Open(Options{Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	s := &model.Snapshot{Seq: 1, Time: time.Unix(1700000000, 0), Node: "n"}
	s.SetKernels([]*model.Kernel{{ID: "k1", Agent: "a", State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}})
	rec.Observe(s)
	rec.Flush()
	rec.Close()
	segs, _ := listSegments(dir)
	for _, sg := range segs {
		b, _ := os.ReadFile(sg.Path)
		f.Add(b)
		f.Add(b[:len(b)-3])
	}
	f.Add([]byte(segMagic))
	d, err := newDecoder()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		sd, err := parseSegment(b, false, d)
		if err != nil {
			return
		}
		st := newState()
		w := walker{}
		w.scan(&segRead{data: sd}, st, time.Time{})
		st.snapshot()
		h := &histWalk{cur: map[model.KernelID]*ktrack{}}
		w = walker{onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
			for _, rr := range grp {
				if rr.typ == recKernel {
					dd := dec{b: rr.body}
					if kh := decodeKernelHead(&dd); dd.err == nil {
						h.put(kh, tm, ckpt)
					}
				}
			}
		}}
		w.scan(&segRead{data: sd}, nil, time.Time{})
	})
}

// FuzzKernelRecord: a kernel record decodes or fails, and what decodes
// encodes back to the same bytes.
func FuzzKernelRecord(f *testing.F) {
	e := enc{}
	encodeKernel(&e, &model.Kernel{ID: "k", Agent: "a", Path: "/p", State: model.KernelStale, Seen: time.Unix(5, 0),
		Alloc:   model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.25"), "1": model.MustDec("1.0")}},
		Slots:   model.ResourceSlot{model.SlotCUDAShares: model.MustDec("1.25")},
		Record:  &model.KernelRecord{SessionID: "s", OwnerUserID: "u"},
		Problem: &model.Issue{Severity: model.SevWarning, Code: "c", Message: "m"},
		Use:     &model.KernelUse{Procs: 1}})
	f.Add(e.b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		d := dec{b: b}
		k := decodeKernel(&d)
		if d.err != nil {
			return
		}
		dh := dec{b: b}
		if h := decodeKernelHead(&dh); dh.err != nil || h.ID != k.ID {
			t.Fatalf("head %v does not match kernel %s", dh.err, k.ID)
		}
	})
}

// FuzzParseWhen: any text is a time or an error, quickly.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"14:02", "-2h", "-7d", "2026-11-27T14:02:00Z", "2026-11-27 14:02", "now", "-99999999d", "yesterday 14:02", "mon 09:30:15", "today"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 27, 16, 40, 3, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		ParseWhen(s, now)
		ParseDays(s)
	})
}

// FuzzRecords feeds arbitrary decompressed record streams (the CRC of a
// chunk vouches only for bytes a writer made; a buggy or newer writer is
// still outside input) to the replay and the history walk.
func FuzzRecords(f *testing.F) {
	dir := f.TempDir()
	node := newSynth(11, 2)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		f.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		rec.Observe(node.step())
		rec.Flush()
	}
	rec.Close()
	segs, _ := listSegments(dir)
	d, err := newDecoder()
	if err != nil {
		f.Fatal(err)
	}
	for _, sg := range segs {
		b, _ := os.ReadFile(sg.Path)
		if sd, err := parseSegment(b, false, d); err == nil {
			f.Add(sd.Checkpoint, sd.Deltas)
		}
	}
	f.Fuzz(func(t *testing.T, ckpt, deltas []byte) {
		if len(ckpt)+len(deltas) > maxFuzzInput {
			return
		}
		sd := &segData{Checkpoint: ckpt, Deltas: deltas}
		st := newState()
		w := walker{}
		w.scan(&segRead{data: sd}, st, time.Time{})
		st.snapshot()
		h := &histWalk{cur: map[model.KernelID]*ktrack{}}
		one := &histWalk{f: Filter{Device: "cuda:0"}}
		w = walker{onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
			for _, rr := range grp {
				dd := dec{b: rr.body}
				switch rr.typ {
				case recKernel:
					if kh := decodeKernelHead(&dd); dd.err == nil {
						h.put(kh, tm, ckpt)
					}
				case recKernelPatch:
					if tr := h.cur[model.KernelID(dd.id())]; tr != nil && dd.err == nil {
						k := &model.Kernel{ID: tr.head.ID}
						head := dd
						decodePatch(&dd, k)
						// What History reads of a patch: the head fields,
						// one device's allocations.
						kh := &model.Kernel{ID: tr.head.ID}
						decodePatchHead(&head, kh, one.want())
					}
				}
			}
		}}
		w.scan(&segRead{data: sd}, nil, time.Time{})
	})
}
