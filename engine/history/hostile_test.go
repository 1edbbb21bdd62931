package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/fgtop/fgtop/model"
)

// Files someone else planted in a history directory: each shape of issue
// 31 (a compression bomb, a sparse file of 6 GiB, FIFOs, a LOCK link,
// segments named for years ahead), on real files in a temp dir.

// smallRecord records a one-kernel node for a second into dir at start
// and returns its one segment's path.
func smallRecord(t testing.TB, dir string, start time.Time) string {
	t.Helper()
	now := start
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s := &model.Snapshot{Seq: 1, Time: now, Node: "n"}
	s.SetKernels([]*model.Kernel{{ID: "k1", Agent: "a", State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {"0": model.MustDec("0.5")}}}})
	rec.Observe(s)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	rec.Close()
	segs, _ := listSegments(dir)
	if len(segs) == 0 {
		t.Fatal("no segment recorded")
	}
	return segs[len(segs)-1].Path
}

// headAndCheckpoint is a real segment's header and checkpoint chunk.
func headAndCheckpoint(t testing.TB, start time.Time) []byte {
	t.Helper()
	b, err := os.ReadFile(smallRecord(t, t.TempDir(), start))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(b[headerSize+1:])
	return append([]byte(nil), b[:headerSize+chunkHead+int(n)]...)
}

// bombStream is a zstd stream of 1 GiB of valid heartbeat records: under
// 256 KiB, made once per test binary (about half a second).
var bombStream = sync.OnceValues(func() ([]byte, error) { return bombOf(1 << 30) })

// bombOf is a zstd stream of raw bytes of heartbeat records.
func bombOf(raw int) ([]byte, error) {
	hb := binary.AppendVarint(nil, time.Date(2026, 11, 20, 0, 0, 1, 0, time.UTC).UnixNano())
	// Padded as a newer writer's heartbeat may be (a reader takes the
	// time and leaves the rest): a tenth of the records to walk, so the
	// test stays quick under -race.
	hb = append(hb, make([]byte, 100)...)
	var recs []byte
	for len(recs) < 1<<20 {
		recs = appendRecord(recs, recBeat, hb)
	}
	var z bytes.Buffer
	zw, err := zstd.NewWriter(&z, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(8<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	for w := 0; w < raw; w += len(recs) {
		zw.Write(recs)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return z.Bytes(), nil
}

// bombSegment is a segment whose delta stream, under 256 KiB, holds
// 1 GiB of valid records.
func bombSegment(t testing.TB, start time.Time) []byte {
	t.Helper()
	z, err := bombStream()
	if err != nil {
		t.Fatal(err)
	}
	return appendChunk(headAndCheckpoint(t, start), chunkDelta, z)
}

// allocated runs f and returns the bytes it allocated (all goroutines).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// within runs f and fails the test when it has not returned in d (a read
// that hangs on a FIFO is left behind, blocked).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s (blocked?)", what, d)
	}
}

// A segment under 256 KiB holding 1 GiB of valid records (a compression bomb)
// is read up to its cap and no further: a seek (the lazy stream) and a
// history walk (the stream read at once) each stop at the cap, in bounded
// memory, and say it. Before: 1 GiB decompressed per read, `history`
// 58 s and 3.1 GB.
func TestCompressionBombIsCapped(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	seg := bombSegment(t, start)
	if len(seg) > 256<<10 {
		t.Fatalf("the bomb is %d bytes: the test wants a small one", len(seg))
	}
	path := filepath.Join(dir, segName(start))
	if err := os.WriteFile(path, seg, 0o600); err != nil {
		t.Fatal(err)
	}
	limit := rawCap(int64(len(seg)))
	// What one read may allocate: the cap for each stream, the buffers
	// a stream is decompressed into and the decoder's window.
	bound := uint64(3*limit + 64<<20)
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	var atErr error
	began := time.Now()
	n := allocated(func() { _, atErr = rd.At(start.Add(30 * time.Minute)) })
	if n > bound {
		t.Errorf("At allocated %d MiB, want at most %d MiB", n>>20, bound>>20)
	}
	var out *OutsideError
	if !errors.As(atErr, &out) || !strings.Contains(atErr.Error(), "decompresses to more than "+sizeWords(limit)) {
		t.Errorf("At: %v; want the record's end named as the cap", atErr)
	}
	var res *HistoryResult
	n = allocated(func() { res, err = rd.History(Filter{Device: "cuda:0"}) })
	if err != nil {
		t.Fatal(err)
	}
	if n > bound {
		t.Errorf("History allocated %d MiB, want at most %d MiB", n>>20, bound>>20)
	}
	said := false
	for _, m := range res.Missing {
		said = said || strings.Contains(m.Why, "decompresses to more than "+sizeWords(limit))
	}
	if !said {
		t.Errorf("History: missing %v does not say the cap", res.Missing)
	}
	// The work is bounded with the memory (decompression stops at the
	// cap): a second of CPU each here, 22 s for the two under -race, and
	// no wall-clock check that a loaded or instrumented run would fail.
	t.Logf("two reads of the bomb: %s", time.Since(began))
}

// A checkpoint whose frame header claims more than the cap is refused on
// the claim, before anything is decompressed; one whose frame says less
// than it holds stops at what it says.
func TestCheckpointSizeClaimIsCapped(t *testing.T) {
	z, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	big := z.EncodeAll(make([]byte, 80<<20), nil)
	seg := appendChunk(segmentHeader(), chunkCheckpoint, big)
	dec, _ := newDecoder()
	var sd *segData
	n := allocated(func() { sd, err = parseSegment(seg, false, dec) })
	if err != nil {
		t.Fatal(err)
	}
	if sd.Checkpoint != nil || !strings.Contains(sd.Damage, "its checkpoint says it holds 80 MiB") {
		t.Fatalf("damage %q", sd.Damage)
	}
	if n > 8<<20 {
		t.Fatalf("refusing the claim allocated %d MiB", n>>20)
	}
	// A frame that says a small size, followed by a second frame that
	// holds 1 GiB and says nothing: stopped at the first's size.
	bomb, err := bombStream()
	if err != nil {
		t.Fatal(err)
	}
	small := z.EncodeAll(make([]byte, 4096), nil)
	seg = appendChunk(segmentHeader(), chunkCheckpoint, append(small, bomb...))
	n = allocated(func() { sd, err = parseSegment(seg, false, dec) })
	if err != nil {
		t.Fatal(err)
	}
	if sd.Checkpoint != nil || !strings.Contains(sd.Damage, "it holds more than the 4 KiB its frame says") {
		t.Fatalf("two frames: damage %q", sd.Damage)
	}
	if n > 16<<20 {
		t.Fatalf("two frames allocated %d MiB", n>>20)
	}
}

// A sparse 6 GiB file named as a segment (it takes no disk) is refused on
// its size, after its 16 header bytes, never read: before, `snapshot
// --at` read all of it (72 s, 6.5 GB). Zeros after a valid header stop
// the read at the first chunk header.
func TestSparseSegmentIsNotRead(t *testing.T) {
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		size int64
		want string
	}{
		{"6GiB", 6 << 30, "6 GiB, more than the 256 MiB fgtop reads of one segment"},
		{"200MiB", 200 << 20, "a chunk header that makes no sense"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, segName(start))
			if err := os.WriteFile(path, headAndCheckpoint(t, start), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, c.size); err != nil {
				t.Skipf("no sparse files here: %v", err)
			}
			rd, err := OpenReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			var atErr error
			var res *Result
			// A read starts with room for the file's claimed size up to
			// 8 MiB; reading the claim was 237 MiB (200 MiB) and 6 GiB.
			n := allocated(func() {
				within(t, 10*time.Second, "At", func() { res, atErr = rd.At(start.Add(time.Hour)) })
			})
			if n > 48<<20 {
				t.Errorf("At allocated %d MiB", n>>20)
			}
			msg := ""
			if atErr != nil {
				msg = atErr.Error()
			} else {
				for _, m := range res.Missing {
					msg += m.Why
				}
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("At: %q; want %q", msg, c.want)
			}
			n = allocated(func() {
				within(t, 10*time.Second, "History", func() { rd.History(Filter{Device: "cuda:0"}) })
			})
			if n > 48<<20 {
				t.Errorf("History allocated %d MiB", n>>20)
			}
			n = allocated(func() {
				within(t, 10*time.Second, "Sessions", func() { rd.Sessions(time.Time{}, time.Time{}) })
			})
			if n > 48<<20 {
				t.Errorf("Sessions allocated %d MiB", n>>20)
			}
		})
	}
}

// A reader bounded by a context stops inside one segment's
// decompression, not only between segments.
func TestReadStopsInsideASegment(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	if err := os.WriteFile(filepath.Join(dir, segName(start)), bombSegment(t, start), 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	rd.SetContext(ctx)
	var atErr error
	began := time.Now()
	within(t, 10*time.Second, "At", func() { _, atErr = rd.At(start.Add(time.Hour)) })
	if !errors.Is(atErr, context.DeadlineExceeded) {
		t.Fatalf("At: %v; want the deadline", atErr)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("At stopped %s after a 5 ms deadline", d)
	}
}

// mkfifo makes a FIFO at path, or skips the test where there are none.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// A FIFO as a segment's tail, as LOCK or named as a segment never blocks
// a reader (`snapshot --at`, `history`, the console's `:at`) nor a
// recorder: before, open(2) waited for a writer forever.
func TestFIFOsInTheDirectoryDoNotBlock(t *testing.T) {
	node := newSynth(31, 10)
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, dir, seg string)
	}{
		{"tail", func(t *testing.T, dir, seg string) { mkfifo(t, tailPath(seg)) }},
		{"LOCK", func(t *testing.T, dir, seg string) { mkfifo(t, filepath.Join(dir, lockName)) }},
		{"segment", func(t *testing.T, dir, seg string) {
			mkfifo(t, filepath.Join(dir, segName(node.t.Add(time.Hour))))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			got, rec := recordKilled(t, dir, node, 20, 1<<20)
			c.plant(t, dir, rec.f.Name())
			within(t, 5*time.Second, "reading", func() {
				rd, err := OpenReader(dir)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := rd.At(got[0].snap.Time); err != nil {
					t.Errorf("At: %v", err)
				}
				rd.History(Filter{Device: "cuda:0"})
				rd.Sessions(time.Time{}, time.Time{})
				rd.Series(context.Background(), got[0].snap.Time, got[0].snap.Time.Add(time.Hour), 10)
				rd.Step(got[0].snap.Time, 1)
			})
			within(t, 5*time.Second, "recording", func() {
				r, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
				if c.name == "LOCK" {
					if err == nil || !strings.Contains(err.Error(), "a FIFO") {
						t.Errorf("Open with a FIFO as LOCK: %v", err)
					}
					return
				}
				if err != nil {
					t.Errorf("Open: %v", err)
					return
				}
				r.Close()
			})
		})
	}
}

// LOCK as a symlink or a hard link to another file never makes a
// recorder truncate that file or write into it: before, the recorder
// wrote its pid over the link's target.
func TestLockLinkLeavesItsTargetAlone(t *testing.T) {
	for _, how := range []string{"symlink", "hardlink", "dangling"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(t.TempDir(), "precious")
			const content = "root:$6$hash:19000:0:99999:7:::\n"
			if how != "dangling" {
				if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if how == "hardlink" {
				err = os.Link(target, filepath.Join(dir, lockName))
			} else {
				err = os.Symlink(target, filepath.Join(dir, lockName))
			}
			if err != nil {
				t.Skipf("%s: %v", how, err)
			}
			r, err := Open(Options{Dir: dir})
			if err == nil {
				r.Close()
				t.Fatal("a recorder took a LOCK that is a link")
			}
			if !strings.Contains(err.Error(), "remove it") {
				t.Errorf("error %q does not name the fix", err)
			}
			b, rerr := os.ReadFile(target)
			switch {
			case how == "dangling" && !errors.Is(rerr, os.ErrNotExist):
				t.Fatalf("the link's target was made: %v", rerr)
			case how != "dangling" && string(b) != content:
				t.Fatalf("the target now holds %q", b)
			}
			if writerActive(dir) {
				t.Error("a LOCK link counted as a recorder holding the directory")
			}
		})
	}
}

// Retention counts and deletes only segments a recorder of the directory
// wrote: a sparse 6 GiB segment named for 2030, one owned by another
// user, a sparse one of 200 MiB and one that is not a segment never make
// it delete the real ones, and it says which it skipped. Before, the 2030
// file made `record` delete every real segment at start-up, silently.
func TestRetentionSkipsPlantedSegments(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(4, 20)
	recordSynth(t, dir, node, 90, 3, Options{CheckpointEvery: 30 * time.Second, Keep: 1000 * 24 * time.Hour})
	real, _ := listSegments(dir)
	if len(real) < 3 {
		t.Fatalf("%d segments", len(real))
	}
	ckpt := headAndCheckpoint(t, node.t)
	plant := func(name string, b []byte, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if size > 0 {
			if err := os.Truncate(p, size); err != nil {
				t.Skipf("no sparse files here: %v", err)
			}
		}
		return name
	}
	future := plant(segName(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), ckpt, 6<<30)
	sparse := plant(segName(real[0].Start.Add(-time.Hour)), ckpt, 200<<20)
	junk := plant(segName(real[0].Start.Add(-2*time.Hour)), []byte("not a segment at all"), 0)
	wants := map[string]string{future: "named for 2030-01-01 00:00:00 UTC, a time still to come", junk: "not an fgtop history segment"}
	if os.Geteuid() == 0 {
		other := plant(segName(real[0].Start.Add(-3*time.Hour)), ckpt, 0)
		if err := os.Chown(filepath.Join(dir, other), 65534, 65534); err == nil {
			wants[other] = "owned by uid 65534"
		}
	}
	var logs []string
	var mu sync.Mutex
	logf := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, strings.TrimSpace(fmt.Sprintf(format, a...)))
	}
	// A directory of well under 10 MiB of real segments: only what is
	// planted could put it over.
	rec, err := Open(Options{Dir: dir, MaxSize: 10 << 20, Keep: 1000 * 24 * time.Hour, Clock: func() time.Time { return node.t }, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	rec.retain(node.t)
	rec.Close()
	for _, s := range real {
		if _, err := os.Stat(s.Path); err != nil {
			t.Errorf("real segment %s: %v", filepath.Base(s.Path), err)
		}
	}
	for _, name := range []string{future, sparse, junk} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("planted %s was removed: %v", name, err)
		}
	}
	all := strings.Join(logs, "\n")
	for name, why := range wants {
		if !strings.Contains(all, name) || !strings.Contains(all, why) {
			t.Errorf("the recorder did not say it skipped %s (%s); it said:\n%s", name, why, all)
		}
		if strings.Count(all, name) != 1 {
			t.Errorf("%s reported %d times, want once", name, strings.Count(all, name))
		}
	}
}

// Records are personal data: a recorder makes its directory 0700 and its
// files 0600, and says when the directory it records into is open to
// others (a 0777 --dir records, with a warning).
func TestRecordIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "var", "history")
	var logs []string
	logf := func(format string, a ...any) { logs = append(logs, fmt.Sprintf(format, a...)) }
	node := newSynth(5, 5)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	rec.Observe(node.step())
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Dir(dir)} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 0700", p, fi.Mode().Perm(), err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) < 3 {
		t.Fatalf("%d files: want LOCK, a segment and its tail", len(ents))
	}
	for _, e := range ents {
		if fi, err := e.Info(); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v; want 0600", e.Name(), fi.Mode().Perm())
		}
	}
	rec.Close()
	if len(logs) > 0 {
		t.Errorf("a private directory was warned about: %q", logs)
	}
	for _, c := range []struct {
		mode os.FileMode
		want string
	}{
		{0o777, "writable by every user (mode 0777)"},
		{0o777 | os.ModeSticky, "writable by every user (mode 1777)"},
		{0o770, "writable by its group (mode 0770)"},
		{0o755, "readable by every user (mode 0755)"},
		{0o750, ""},
		{0o700, ""},
	} {
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		logs = nil
		rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }, Logf: logf})
		if err != nil {
			t.Fatalf("mode %v: %v", c.mode, err)
		}
		rec.Close()
		got := strings.Join(logs, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) || c.want != "" && !strings.Contains(got, "chmod 700 "+dir) {
			t.Errorf("mode %v: said %q, want %q and the fix", c.mode, got, c.want)
		}
	}
}

// A damaged last chunk is named as damage (the segment, the byte, what is
// lost), not as the record's end: before, a moment after it was "after
// the record ends (no recorder has written since)".
func TestDamagedLastChunkIsNamed(t *testing.T) {
	for _, how := range []string{"flipped", "cut"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			node := newSynth(6, 10)
			got := recordSynth(t, dir, node, 40, 4, Options{})
			segs, _ := listSegments(dir)
			b, _ := os.ReadFile(segs[0].Path)
			// The last chunk's offset: walk the chunks.
			off, last := headerSize, 0
			for off < len(b) {
				last = off
				off += chunkHead + int(binary.LittleEndian.Uint32(b[off+1:]))
			}
			if last == headerSize {
				t.Fatal("one chunk only: the test wants deltas")
			}
			if how == "flipped" {
				b[len(b)-2] ^= 0xff
			} else {
				b = b[:len(b)-3]
			}
			if err := os.WriteFile(segs[0].Path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			rd, err := OpenReader(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = rd.At(got[len(got)-1].snap.Time.Add(time.Hour))
			var out *OutsideError
			if !errors.As(err, &out) {
				t.Fatalf("At: %v", err)
			}
			msg := err.Error()
			for _, want := range []string{filepath.Base(segs[0].Path) + " is damaged at byte " + strconv.Itoa(last), "is lost"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "no recorder has written since") {
				t.Errorf("damage called the record's end: %q", msg)
			}
			// A second after the last intact change is lost too: the
			// beat's slack does not cover a damaged end.
			_, end, err := rd.Span()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rd.At(end.Add(time.Second)); !errors.As(err, &out) || out.Damage == "" {
				t.Errorf("At a second after the damage: %v", err)
			}

			// history and the replay's sessions list it among what the
			// record lacks (they listed nothing, and the kernels open);
			// while a recorder holds the directory a torn end is a
			// chunk being written, not damage.
			name := filepath.Base(segs[0].Path)
			for _, active := range []bool{false, true} {
				rd.Active = active
				res, err := rd.History(Filter{Device: "cuda:0"})
				if err != nil {
					t.Fatalf("active %v: History: %v", active, err)
				}
				sres, err := rd.Sessions(time.Time{}, time.Time{})
				if err != nil {
					t.Fatalf("active %v: Sessions: %v", active, err)
				}
				for what, ms := range map[string][]Missing{"history": res.Missing, "sessions": sres.Missing} {
					said := fmt.Sprint(ms)
					if wantSaid := !active; strings.Contains(said, name) != wantSaid {
						t.Errorf("%s, active %v: missing %s; want the damage named: %v", what, active, said, wantSaid)
					}
				}
			}
		})
	}
}

// A length a chunk, a frame or a record claims past the format's bound is
// damage that says the bound.
func TestSizeClaimsSayTheCap(t *testing.T) {
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	ck := headAndCheckpoint(t, start)
	head := func(kind byte, n uint32) []byte {
		b := append(slices.Clone(ck), kind)
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(b, n), 0)
	}
	dec, _ := newDecoder()
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{head(chunkDelta, 1<<32-1), "length 4294967295; a chunk is of kind 'C' or 'D' and holds at most 64 MiB"},
		{head(chunkDelta, maxChunk+1), "holds at most 64 MiB"},
	} {
		sd, err := parseSegment(c.b, false, dec)
		if err != nil || !strings.Contains(sd.Damage, c.want) || sd.Offset != int64(len(ck)) {
			t.Errorf("damage %q at %d (%v); want %q at %d", sd.Damage, sd.Offset, err, c.want, len(ck))
		}
	}
	tl := binary.LittleEndian.AppendUint32(tailHeader(0), 1<<31)
	if td, err := parseTail(append(tl, 0, 0, 0, 0)); err != nil || !strings.Contains(td.Damage, "a frame of 2147483648 bytes (a frame holds 1 byte to 64 MiB)") {
		t.Errorf("tail damage %v, %v", td, err)
	}
	it := recIter{b: binary.AppendUvarint(nil, maxRecord+1)}
	it.next()
	if it.err == nil || !strings.Contains(it.err.Error(), "a record holds 1 byte to 16 MiB") {
		t.Errorf("record: %v", it.err)
	}
	si := streamIter{cur: binary.AppendUvarint(nil, maxRecord+1), ch: make(chan []byte)}
	si.next()
	if si.err == nil || !strings.Contains(si.err.Error(), "a record holds 1 byte to 16 MiB") {
		t.Errorf("stream record: %v", si.err)
	}
}

// A planted segment named for 2030, whose records say 2030, does not
// become the state a new recorder carries on from: before, its time set
// the newest journal record seen, and every agent.toml journal record
// until 2030 would have been skipped.
func TestRecorderDoesNotCarryOnFromAPlantedSegment(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(7, 5)
	recordSynth(t, dir, node, 10, 2, Options{})
	future := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.WriteFile(filepath.Join(dir, segName(future)), headAndCheckpoint(t, future), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if !rec.journalSeen.Before(node.t.Add(time.Minute)) || rec.journalSeen.IsZero() {
		t.Fatalf("the recorder carries on from %s, want the real record's end (before %s)", rec.journalSeen, node.t)
	}
	if _, ok := rec.carried["k1"]; ok {
		t.Fatal("the planted segment's kernel was carried")
	}
}
