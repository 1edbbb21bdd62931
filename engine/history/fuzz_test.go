package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/fgtop/fgtop/model"
)

// maxFuzzInput bounds what the fuzz targets feed the parsers (a segment
// is read whole; the record bounds are tested, not the machine's memory).
const maxFuzzInput = 1 << 20

// FuzzSegment feeds arbitrary bytes to the segment parser and the replay:
// whatever the bytes, the reader answers or says what is wrong, and never
// panics or allocates beyond the format's bounds. The seeds include the
// planted shapes of issue 31 (size claims, compression bombs,
// truncations), and each input's allocations are checked against the cap
// its size allows, here in the target.
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
		for _, seed := range plantedSegments(f, b) {
			f.Add(seed)
		}
	}
	f.Add([]byte(segMagic))
	d, err := newDecoder()
	if err != nil {
		f.Fatal(err)
	}
	file := filepath.Join(f.TempDir(), "seg")
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		var sd *segData
		var err error
		// The format's cap, smaller: 1 MiB and 64 times the input's size.
		limit := fuzzCap(len(b))
		bound := uint64(3*limit + 48<<20)
		n := allocated(func() {
			sd, err = parseSegmentCap(context.Background(), b, false, false, d, nil, nil, limit)
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
			// The sessions' walk over the same records.
			sw := &sessWalk{h: &histWalk{in: newInterner()}, heads: map[model.KernelID]*sessTrack{}, sums: map[model.KernelID]*ksum{},
				since: time.Unix(1700000000, 0), until: time.Unix(1700000000, 0).Add(time.Hour)}
			w = walker{onGroup: func(tm time.Time, grp []rawRec, ckpt bool) {
				if !ckpt {
					sw.deltas(tm, grp)
					return
				}
				for _, rr := range grp {
					if rr.typ == recKernel {
						dd := dec{b: rr.body, in: sw.h.in}
						kh := decodeSessHeadRest(&dd, model.KernelID(dd.id()))
						// The flat allocation says what the maps say.
						dm := dec{b: rr.body}
						km := decodeKernelHead(&dm)
						if (dd.err == nil) != (dm.err == nil) {
							t.Fatalf("flat head: %v; maps: %v", dd.err, dm.err)
						}
						if dd.err == nil {
							if !allocIdentical(kh.alloc(), km.Alloc) || kh.fa.holds() != holds(km.Alloc) || (kh.alloc() == nil) != (km.Alloc == nil) {
								t.Fatalf("flat allocation %v, maps %v", kh.alloc(), km.Alloc)
							}
							sw.put(kh, tm, true)
						}
					}
				}
			}}
			w.scan(&segRead{data: sd}, nil, time.Time{})
		})
		if n > bound {
			t.Fatalf("a %d-byte segment allocated %d MiB, over its cap's bound of %d MiB", len(b), n>>20, bound>>20)
		}
		if err == nil && (int64(len(sd.Checkpoint)) > limit || int64(len(sd.Deltas)) > limit) {
			t.Fatalf("a %d-byte segment decompressed to %d and %d bytes, over its cap of %d", len(b), len(sd.Checkpoint), len(sd.Deltas), limit)
		}
		// Read as a file, header first and chunk by chunk, the segment
		// says the same: what the read leaves out is after what the
		// parser stops at.
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		fb, ferr := readSegmentFile(file, nil)
		if (ferr == nil) != (err == nil) {
			t.Fatalf("read as a file: %v; as bytes: %v", ferr, err)
		}
		if ferr != nil {
			return
		}
		if !bytes.HasPrefix(b, fb) {
			t.Fatal("the file's read is not a prefix of its bytes")
		}
		fd, err := parseSegmentCap(context.Background(), fb, false, false, d, nil, nil, limit)
		if err != nil || fd.Damage != sd.Damage || fd.Offset != sd.Offset || fd.Torn != sd.Torn || !bytes.Equal(fd.Checkpoint, sd.Checkpoint) {
			t.Fatalf("read as a file: %v, damage %q at %d (torn %v); as bytes: %q at %d (torn %v)", err, fd.Damage, fd.Offset, fd.Torn, sd.Damage, sd.Offset, sd.Torn)
		}
	})
}

// fuzzCap is what FuzzSegment lets a stream of a size-byte segment
// decompress to: the format's rule with a floor of 1 MiB, not 64.
func fuzzCap(size int) int64 { return 1<<20 + rawRatio*int64(size) }

// plantedSegments are the shapes a planted segment takes (issue 31),
// from a real segment's bytes: chunks that claim sizes they lack or the
// format refuses, a checkpoint whose frame claims more than the cap, a
// checkpoint and a delta stream that decompress past it, zeros after a
// valid header (a sparse file), and the segment cut at every eighth.
func plantedSegments(t testing.TB, real []byte) [][]byte {
	head := real[:headerSize]
	ckpt := real[:headerSize+chunkHead+int(binary.LittleEndian.Uint32(real[headerSize+1:]))]
	claim := func(kind byte, n uint32, payload []byte) []byte {
		var h [chunkHead]byte
		h[0] = kind
		binary.LittleEndian.PutUint32(h[1:], n)
		return append(append(slices.Clone(ckpt), h[:]...), payload...)
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	over := make([]byte, fuzzCap(64<<10)+1)
	// A frame that says its size, and one that does not (streamed).
	said := zw.EncodeAll(over, nil)
	var unsaid bytes.Buffer
	sw, _ := zstd.NewWriter(&unsaid, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	sw.Write(over)
	sw.Close()
	// 128 MiB of valid records in 28 KB: the cap stops it at a few MiB.
	bomb, err := bombOf(128 << 20)
	if err != nil {
		t.Fatal(err)
	}
	out := [][]byte{
		claim(chunkDelta, maxChunk, []byte("short")),
		claim(chunkDelta, maxChunk+1, nil),
		claim(chunkDelta, 1<<32-1, nil),
		claim(0, 0, nil),
		append(slices.Clone(head), make([]byte, 4096)...),
		append(slices.Clone(ckpt), make([]byte, 4096)...),
		appendChunk(slices.Clone(head), chunkCheckpoint, said),
		appendChunk(slices.Clone(head), chunkCheckpoint, unsaid.Bytes()),
		appendChunk(slices.Clone(head), chunkCheckpoint, append(zw.EncodeAll(make([]byte, 4096), nil), bomb...)),
		appendChunk(slices.Clone(ckpt), chunkDelta, bomb),
	}
	for cut := headerSize; cut < len(real); cut += max(1, len(real)/8) {
		out = append(out, real[:cut])
	}
	return out
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
		h := decodeKernelHead(&dh)
		if dh.err != nil || h.ID != k.ID {
			t.Fatalf("head %v does not match kernel %s", dh.err, k.ID)
		}
		// The sessions walk's flat allocation is the same allocation.
		ds := dec{b: b, in: newInterner()}
		sh := decodeSessHeadRest(&ds, model.KernelID(ds.id()))
		if ds.err != nil || sh.ID != h.ID || sh.Agent != h.Agent || sh.State != h.State || sh.Session != h.Session || sh.User != h.User || sh.Project != h.Project {
			t.Fatalf("flat head %+v (%v), head %+v", sh.kernelHead, ds.err, h)
		}
		if !allocIdentical(sh.alloc(), h.Alloc) || (sh.alloc() == nil) != (h.Alloc == nil) || sh.fa.holds() != holds(h.Alloc) {
			t.Fatalf("flat allocation %v, maps %v", sh.alloc(), h.Alloc)
		}
		if sh.fa.within(h.Alloc) != allocWithin(h.Alloc, h.Alloc) || !sh.same(&sh) {
			t.Fatal("a flat allocation is not within itself")
		}
		if !sh.fa.irregular && !sh.fa.withinFlat(&sh.fa) {
			t.Fatal("a regular flat allocation is not within itself read flat")
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
