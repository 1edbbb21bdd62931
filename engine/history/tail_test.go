package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kill leaves the directory as a SIGKILLed recorder does: what was
// written stays, nothing more is, the lock goes.
func kill(r *Recorder) {
	// The folds of the segments it sealed before are written (a killed
	// one's half-written fold is removed by the next recorder).
	r.folding.Wait()
	if r.f != nil {
		r.f.Close()
		r.tf.Close()
	}
	r.lock.Close()
	r.lock = nil
}

// recordKilled records steps changes of node, each written on its own (a
// node with one change a second), with a tail compressed into the segment
// once it holds tailMax bytes, and kills the recorder.
func recordKilled(t *testing.T, dir string, node *synthNode, steps, tailMax int) ([]seen, *Recorder) {
	t.Helper()
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	rec.tailMax = tailMax
	var out []seen
	// Until the tail holds something: the kill is to find records there.
	for i := 0; i < steps || len(rec.tailRecs) == 0 && i < steps+100; i++ {
		s := node.step()
		rec.Observe(s)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		out = append(out, seen{s, docOf(t, s)})
	}
	kill(rec)
	return out, rec
}

// checkPrefix asks for every moment of got and wants an exact answer up
// to some point and, after it, the last of those (or "after the record"):
// what a cut costs is what comes after it, never anything before.
func checkPrefix(t *testing.T, dir string, got []seen, what string) (intact int) {
	t.Helper()
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	intact = -1
	for i, s := range got {
		res, err := rd.At(s.snap.Time)
		var out *OutsideError
		switch {
		case errors.As(err, &out) && i > intact:
			continue
		case err != nil && intact < 0:
			// A cut inside the checkpoint leaves nothing.
			return intact
		case err != nil:
			t.Fatalf("%s: At %d: %v", what, i, err)
		}
		if bytes.Equal(docOf(t, res.Snap), s.doc) {
			if intact != i-1 {
				t.Fatalf("%s: change %d answered exactly after %d was lost", what, i, intact+1)
			}
			intact = i
			continue
		}
		if intact < 0 || res.Snap.Seq != got[intact].snap.Seq {
			t.Fatalf("%s: At %d gave seq %d, want the last intact %d", what, i, res.Snap.Seq, got[max(intact, 0)].snap.Seq)
		}
	}
	return intact
}

// A killed recorder's changes are all in the record, the last ones in the
// segment's tail, and stay there when a new recorder starts.
func TestKilledRecorderKeepsItsTail(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(11, 20)
	got, rec := recordKilled(t, dir, node, 60, 600)
	if rec.segSize <= int64(headerSize+chunkHead) {
		t.Fatal("nothing compressed into the segment: the test wants both")
	}
	tail, err := os.ReadFile(tailPath(rec.f.Name()))
	if err != nil || len(tail) <= tailHeadSize {
		t.Fatalf("tail: %d bytes, %v", len(tail), err)
	}
	if n := checkPrefix(t, dir, got, "killed"); n != len(got)-1 {
		t.Fatalf("%d of %d changes answered exactly", n+1, len(got))
	}
	// A new recorder goes on in a new segment; the old tail still counts.
	node.t = node.t.Add(time.Minute)
	more := recordSynth(t, dir, node, 10, 1, Options{})
	if n := checkPrefix(t, dir, got, "after a restart"); n != len(got)-1 {
		t.Fatalf("after a restart: %d of %d changes answered exactly", n+1, len(got))
	}
	if n := checkPrefix(t, dir, more, "the new recorder's"); n != len(more)-1 {
		t.Fatalf("the new recorder: %d of %d changes answered exactly", n+1, len(more))
	}
	res := mustAt(t, dir, got[len(got)-1].snap.Time.Add(30*time.Second))
	if res.Exact || len(res.Missing) != 1 || !strings.Contains(res.Missing[0].Why, "stopped without a word") {
		t.Fatalf("inside the gap: exact %v, missing %v", res.Exact, res.Missing)
	}
	// A clean stop leaves no tail.
	segs, _ := listSegments(dir)
	if _, err := os.Stat(tailPath(segs[len(segs)-1].Path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cleanly closed segment kept its tail: %v", err)
	}
}

// A tail cut anywhere (a kill inside a write, a full disk) loses only the
// frames from the cut on.
func TestTailCutAtEveryOffset(t *testing.T) {
	dir := t.TempDir()
	got, rec := recordKilled(t, dir, newSynth(12, 20), 40, 1500)
	path := tailPath(rec.f.Name())
	full, _ := os.ReadFile(path)
	// Every frame's first and last bytes, and a hundred offsets besides.
	cuts := map[int]bool{len(full): true}
	for c := 0; c < len(full); c += 1 + len(full)/100 {
		cuts[c] = true
	}
	for at := tailHeadSize; at+tailFrameHead <= len(full); {
		n := int(full[at]) | int(full[at+1])<<8 | int(full[at+2])<<16 | int(full[at+3])<<24
		for _, c := range []int{at - 1, at, at + 1, at + tailFrameHead, at + tailFrameHead + n - 1} {
			cuts[c] = true
		}
		at += tailFrameHead + n
	}
	var order []int
	for c := range cuts {
		if c >= 0 && c <= len(full) {
			order = append(order, c)
		}
	}
	slices.Sort(order)
	frames := 0
	for _, cut := range order {
		if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		n := checkPrefix(t, dir, got, "tail cut at "+strconv.Itoa(cut))
		if td, err := parseTail(full[:cut]); err == nil {
			if td.Damage == "" {
				frames = n
			} else if n != frames {
				t.Fatalf("tail cut at %d: %d changes exact, %d before the cut frame", cut, n+1, frames+1)
			}
		}
		if cut == len(full) && n != len(got)-1 {
			t.Fatalf("the whole tail: %d of %d changes exact", n+1, len(got))
		}
	}
}

// Killed while compressing the tail into the segment: the chunk cut short
// at any byte, or written whole with the tail not yet emptied. Either way
// every change stands, once.
func TestKilledWhileCompressingTheTail(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(13, 20)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	rec.tailMax = 800
	var got []seen
	var segBefore, tailBefore []byte
	for len(got) < 200 {
		s := node.step()
		rec.Observe(s)
		var seg, tail []byte
		if rec.f != nil {
			seg, _ = os.ReadFile(rec.f.Name())
			tail, _ = os.ReadFile(rec.tf.Name())
		}
		size := rec.segSize
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		got = append(got, seen{s, docOf(t, s)})
		if seg != nil && rec.segSize != size && len(got) > 20 {
			segBefore, tailBefore = seg, tail
			break
		}
	}
	if segBefore == nil {
		t.Fatal("the tail was never compressed")
	}
	segPath, tPath := rec.f.Name(), rec.tf.Name()
	kill(rec)
	segAfter, _ := os.ReadFile(segPath)
	tailAfter, _ := os.ReadFile(tPath)
	check := func(what string, seg, tail []byte, want int) {
		os.WriteFile(segPath, seg, 0o644)
		os.WriteFile(tPath, tail, 0o644)
		if n := checkPrefix(t, dir, got, what); n != want {
			t.Fatalf("%s: %d changes exact, want %d", what, n+1, want+1)
		}
	}
	// The chunk cut anywhere, the tail as it was: the tail stands in for
	// it, the last change (in neither) lost.
	for cut := len(segBefore); cut < len(segAfter); cut += 1 + (len(segAfter)-len(segBefore))/30 {
		check("chunk cut at "+strconv.Itoa(cut), segAfter[:cut], tailBefore, len(got)-2)
	}
	// The chunk whole, the tail not yet emptied: the segment has it all.
	check("tail not emptied", segAfter, tailBefore, len(got)-1)
	// The tail emptied but its head not yet written.
	check("tail emptied", segAfter, nil, len(got)-1)
	check("as written", segAfter, tailAfter, len(got)-1)
}

// Retention drops a segment's tail with it.
func TestRetentionDropsTails(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(14, 30)
	for i := 0; i < 3; i++ {
		recordKilled(t, dir, node, 30, 1<<20)
		node.t = node.t.Add(time.Minute)
	}
	segs, _ := listSegments(dir)
	tails, _ := filepath.Glob(filepath.Join(dir, "*"+tailSuffix))
	if len(segs) != 3 || len(tails) != 3 {
		t.Fatalf("%d segments, %d tails", len(segs), len(tails))
	}
	rec, err := Open(Options{Dir: dir, MaxSize: segs[2].Size + 1, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	for _, s := range segs[:2] {
		if _, err := os.Stat(tailPath(s.Path)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the tail of a dropped segment stays (%v)", filepath.Base(s.Path), err)
		}
	}
	if _, err := os.Stat(tailPath(segs[2].Path)); err != nil {
		t.Fatalf("the kept segment lost its tail: %v", err)
	}
}

// FuzzTail reads a tail file of any bytes beside a killed recorder's
// segment: the reader answers from what is intact, never panics, and a
// moment before the tail is answered as without it.
func FuzzTail(f *testing.F) {
	dir := f.TempDir()
	node := newSynth(15, 5)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		f.Fatal(err)
	}
	rec.tailMax = 400
	var first time.Time
	for i := 0; i < 12; i++ {
		s := node.step()
		if i == 0 {
			first = s.Time
		}
		rec.Observe(s)
		rec.Flush()
	}
	segPath, tPath := rec.f.Name(), rec.tf.Name()
	kill(rec)
	seg, _ := os.ReadFile(segPath)
	tail, _ := os.ReadFile(tPath)
	f.Add(tail)
	f.Add(tail[:len(tail)-3])
	f.Add(tail[:tailHeadSize])
	f.Add([]byte(tailMagic))
	// Planted shapes (issue 31): frames claiming lengths they lack or the
	// format refuses, zeros after a valid head (a sparse file), cuts.
	frame := func(n uint32, recs []byte) []byte {
		b := binary.LittleEndian.AppendUint32(slices.Clone(tail[:tailHeadSize]), n)
		return append(binary.LittleEndian.AppendUint32(b, 0), recs...)
	}
	f.Add(frame(maxChunk, []byte("short")))
	f.Add(frame(maxChunk+1, nil))
	f.Add(frame(1<<32-1, nil))
	f.Add(frame(0, nil))
	f.Add(append(slices.Clone(tail[:tailHeadSize]), make([]byte, 4096)...))
	for cut := tailHeadSize; cut < len(tail); cut += max(1, len(tail)/8) {
		f.Add(tail[:cut])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		if td, err := parseTail(b); err == nil && len(td.Recs) > len(b) {
			t.Fatalf("%d bytes of records from a %d-byte tail", len(td.Recs), len(b))
		}
		// Read from its file, a tail costs what its bytes are, whatever
		// lengths it claims: checked here, per input.
		tp := filepath.Join(t.TempDir(), "seg"+tailSuffix)
		os.WriteFile(tp, b, 0o600)
		var td *tailData
		if n := allocated(func() { td = readTail(strings.TrimSuffix(tp, tailSuffix) + segSuffix) }); n > uint64(4*len(b)+4*tailMax) {
			t.Fatalf("reading a %d-byte tail allocated %d bytes", len(b), n)
		}
		// Read from its file, a tail is what its bytes parse to; bytes
		// that do not parse are no tail at all where a recorder starting
		// one leaves them (nothing, the head's first bytes), else a tail
		// that cannot be used, which the reader says.
		switch pd, err := parseTail(b); {
		case err == nil && (td == nil || td.Unusable != "" || !bytes.Equal(td.Recs, pd.Recs) || td.Damage != pd.Damage || td.Offset != pd.Offset):
			t.Fatalf("read from its file the tail differs from its bytes")
		case err != nil && startingTail(b) != (td == nil):
			t.Fatalf("a tail of %d bytes (%v) read as %+v", len(b), err, td)
		case err != nil && td != nil && (td.Unusable == "" || len(td.Recs) > 0):
			t.Fatalf("bytes that are no tail (%v) read as %+v", err, td)
		}
		d := t.TempDir()
		sp := filepath.Join(d, filepath.Base(segPath))
		os.WriteFile(sp, seg, 0o644)
		os.WriteFile(tailPath(sp), b, 0o644)
		rd, err := OpenReader(d)
		if err != nil {
			t.Fatal(err)
		}
		rd.Span()
		if _, err := rd.At(first); err != nil {
			t.Fatalf("a moment in the segment itself: %v", err)
		}
		rd.At(node.t)
		rd.History(Filter{Device: "cuda:1"})
	})
}

// TestAtAfterACleanStop: a moment after a recorder stopped cleanly is
// outside the record at once (its end record is the moment it stopped);
// after a killed recorder's last write, the beat's slack still reads as
// recorded (it may have written nothing because nothing changed).
func TestAtAfterACleanStop(t *testing.T) {
	for _, clean := range []bool{true, false} {
		dir := t.TempDir()
		node := newFoldNode(7)
		rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			rec.Observe(node.step())
		}
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		stop := node.t
		if clean {
			rec.Close()
		} else {
			kill(rec)
		}
		rd, err := OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rd.At(stop); err != nil {
			t.Fatalf("clean=%v: at the stop: %v", clean, err)
		}
		_, err = rd.At(stop.Add(2 * time.Second))
		var out *OutsideError
		if clean != errors.As(err, &out) {
			t.Errorf("clean=%v: 2 s after the last moment: %v", clean, err)
		}
	}
}

// A tail that is there but cannot be used loses the changes written
// after the segment's last chunk, and the record says so, naming the
// tail; one a recorder leaves while starting a tail (empty, or its head
// cut short) loses nothing and is not damage.
func TestUnusableTailIsSaid(t *testing.T) {
	versioned := func(v uint32) []byte {
		h := tailHeader(0)
		binary.LittleEndian.PutUint32(h[8:], v)
		binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
		return h
	}
	for _, c := range []struct {
		name string
		edit func(full []byte) []byte
		want string // "" : no damage said
	}{
		{"empty", func([]byte) []byte { return nil }, ""},
		{"magic cut short", func([]byte) []byte { return []byte(tailMagic[:5]) }, ""},
		{"head cut short", func(full []byte) []byte { return full[:tailHeadSize-3] }, ""},
		{"checksum", func(full []byte) []byte { full[20] ^= 0xff; return full }, "a tail whose head does not match its checksum"},
		{"magic", func(full []byte) []byte { full[0] = 'X'; return full }, "not an fgtop history tail"},
		{"short garbage", func([]byte) []byte { return []byte("garbage") }, "not an fgtop history tail"},
		{"version", func(full []byte) []byte { return append(versioned(Version+1), full[tailHeadSize:]...) }, "a tail of format version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			got, rec := recordKilled(t, dir, newSynth(13, 20), 60, 600)
			path := tailPath(rec.f.Name())
			full, err := os.ReadFile(path)
			if err != nil || len(full) <= tailHeadSize {
				t.Fatalf("tail: %d bytes, %v", len(full), err)
			}
			if err := os.WriteFile(path, c.edit(full), 0o600); err != nil {
				t.Fatal(err)
			}
			res := mustHistory(t, dir, Filter{})
			var said []string
			for _, m := range res.Missing {
				if strings.Contains(m.Why, tailName(rec.f.Name())) {
					said = append(said, m.Why)
				}
			}
			if c.want == "" {
				if len(said) > 0 {
					t.Fatalf("a tail being started read as damage: %q", said)
				}
				return
			}
			if len(said) != 1 || !strings.Contains(said[0], c.want) {
				t.Fatalf("missing %v; want one naming the tail: %q", res.Missing, c.want)
			}
			// What the segment's chunks hold still stands.
			if n := checkPrefix(t, dir, got, c.name); n < 0 || n == len(got)-1 {
				t.Fatalf("%d of %d changes exact: want the chunks' and not the tail's", n+1, len(got))
			}
		})
	}
}

// A segment that ends with its end or rotate record holds every record
// its recorder wrote (the tail is compressed into it before it is
// removed): a tail beside it that cannot be used loses nothing, and the
// record reads as it did without it, continued across the rotation.
func TestUnusableTailBesideASealedSegment(t *testing.T) {
	dir := t.TempDir()
	recordSynth(t, dir, newSynth(13, 20), 300, 1, Options{NoFolds: true, CheckpointEvery: time.Minute})
	segs, err := listSegments(dir)
	if err != nil || len(segs) < 3 {
		t.Fatalf("%d segments, %v", len(segs), err)
	}
	read := func() *HistoryResult { return mustHistory(t, dir, Filter{}) }
	want := read()
	for _, s := range []segFile{segs[1], segs[len(segs)-1]} {
		if err := os.WriteFile(tailPath(s.Path), []byte("not a tail, and longer than a tail's head"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := read()
	if len(got.Missing) != len(want.Missing) {
		t.Fatalf("missing %v; want %v", got.Missing, want.Missing)
	}
	if !slices.EqualFunc(got.Intervals, want.Intervals, func(a, b Interval) bool {
		return a.Kernel == b.Kernel && a.Device == b.Device && a.From.Equal(b.From) && a.To.Equal(b.To) && a.Gone == b.Gone && a.Open == b.Open
	}) {
		t.Fatalf("%d intervals differ from the %d read without the tails", len(got.Intervals), len(want.Intervals))
	}
	end := want.To
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.At(end); err != nil {
		t.Fatalf("At the record's end: %v", err)
	}
}
