package history

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// dayFeed is what a simulated day fed the recorder, minute by minute: the
// mean held share, utilisation and memory share of each device.
type dayFeed struct {
	start time.Time
	held  [2][]float64
	util  [2][]float64
	mem   [2][]float64
}

// recordDay records a day of a two-GPU node, one telemetry snapshot every
// 20 s, with allocation, utilisation and memory that vary by the minute
// and within it, and returns what it fed.
func recordDay(t testing.TB, dir string, minutes int) *dayFeed {
	t.Helper()
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	now := start
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return now }, FlushEvery: time.Second, CheckpointEvery: 6 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f := &dayFeed{start: start}
	const total = 80 << 30
	for d := range 2 {
		f.held[d], f.util[d], f.mem[d] = make([]float64, minutes), make([]float64, minutes), make([]float64, minutes)
	}
	var seq uint64
	for m := range minutes {
		for k := range 3 {
			now = start.Add(time.Duration(m)*time.Minute + time.Duration(k)*20*time.Second)
			seq++
			s := &model.Snapshot{Seq: seq, Time: now, Node: "n1", Usage: map[model.DeviceKey]*model.DeviceUsage{}}
			for d := range 2 {
				util := uint32((m*7 + k*3 + d*40) % 101)
				used := uint64(total) / 64 * uint64((m+k+d*13)%65)
				// Tenths of a share, 0 to 1.2: over capacity now and then.
				tenths := int64((m/10 + k + d*5) % 13)
				dev := model.Device{ID: model.DeviceID(string(rune('0' + d))), Name: "cuda", Slot: model.SlotCUDAShares, SlotType: "count",
					Capacity: model.MustDec("1.0"), Index: d,
					Telemetry: &model.Telemetry{UtilGPU: model.Opt[uint32]{V: util, Valid: true},
						MemUsed: model.Opt[uint64]{V: used, Valid: true}, MemTotal: model.Opt[uint64]{V: total, Valid: true}}}
				s.Devices = append(s.Devices, dev)
				if tenths > 0 {
					s.Usage[dev.Key()] = &model.DeviceUsage{Key: dev.Key(), Kernels: 1, Held: model.ResourceSlot{model.SlotCUDAShares: model.NewDec(tenths, -1)}}
				}
				f.held[d][m] += float64(tenths) / 10 / 3
				f.util[d][m] += float64(util) / 100 / 3
				f.mem[d][m] += float64(used) / total / 3
			}
			rec.Observe(s)
		}
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	now = start.Add(time.Duration(minutes) * time.Minute)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSeriesFromRecordedDay(t *testing.T) {
	dir := t.TempDir()
	const minutes = 24 * 60
	f := recordDay(t, dir, minutes)
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.segs) < 4 {
		t.Fatalf("a day at 6 h a segment: %d segments", len(rd.segs))
	}
	for _, tc := range []struct {
		name      string
		from, to  time.Time
		cols, per int // per: minutes a column
	}{
		{"whole day, 30 min a column", f.start, f.start.Add(24 * time.Hour), 48, 30},
		{"an hour across a segment boundary, 1 min a column", f.start.Add(5*time.Hour + 30*time.Minute), f.start.Add(6*time.Hour + 30*time.Minute), 60, 1},
		{"last 7 h, 5 min a column", f.start.Add(17 * time.Hour), f.start.Add(24 * time.Hour), 84, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := rd.Series(context.Background(), tc.from, tc.to, tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			if s.Step != time.Duration(tc.per)*time.Minute || len(s.Devices) != 2 || s.NoHeld != 0 || len(s.Missing) != 0 {
				t.Fatalf("step %v, %d devices, %d without held, missing %v", s.Step, len(s.Devices), s.NoHeld, s.Missing)
			}
			first := int(tc.from.Sub(f.start) / time.Minute)
			// The last minute is summarised only when the next begins:
			// the day's last minute is in the record only if Close wrote it.
			for d := range 2 {
				ds := s.Devices[model.DeviceKey{Name: "cuda", ID: model.DeviceID(string(rune('0' + d)))}]
				if ds == nil {
					t.Fatalf("device %d: no series", d)
				}
				for c := range tc.cols {
					for _, q := range []struct {
						what string
						got  []float32
						fed  []float64
					}{{"held", ds.Held, f.held[d]}, {"util", ds.Util, f.util[d]}, {"mem", ds.Mem, f.mem[d]}} {
						want, n := 0.0, 0
						for m := first + c*tc.per; m < first+(c+1)*tc.per && m < minutes; m++ {
							if m == minutes-1 && !s.To.Before(f.start.Add(minutes*time.Minute)) && math.IsNaN(float64(q.got[c])) {
								continue
							}
							want += q.fed[m]
							n++
						}
						want /= float64(n)
						if g := float64(q.got[c]); math.IsNaN(g) || math.Abs(g-want) > 1e-5 {
							t.Fatalf("device %d %s column %d: drawn %v, fed %v", d, q.what, c, g, want)
						}
					}
				}
			}
		})
	}
	// Outside the record: every column a gap, never a zero.
	s, err := rd.Series(context.Background(), f.start.Add(-48*time.Hour), f.start.Add(-24*time.Hour), 24)
	if err != nil || len(s.Devices) != 0 || s.Minutes != 0 {
		t.Fatalf("before the record: %v, %d devices, %d minutes", err, len(s.Devices), s.Minutes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rd.Series(ctx, f.start, f.start.Add(time.Hour), 60); err == nil {
		t.Fatal("a cancelled read answered")
	}
	for _, cols := range []int{0, MaxSeriesCols + 1} {
		if _, err := rd.Series(context.Background(), f.start, f.start.Add(time.Hour), cols); err == nil {
			t.Fatalf("%d columns accepted", cols)
		}
	}
}

// TestSeriesReadsVersionOne: a segment written before the held share was
// summarised still reads; a newer version than this fgtop knows does not.
func TestSeriesReadsVersionOne(t *testing.T) {
	dir := t.TempDir()
	recordDay(t, dir, 30)
	segs, err := listSegments(dir)
	if err != nil || len(segs) == 0 {
		t.Fatal(segs, err)
	}
	b, err := os.ReadFile(segs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	for v := uint32(1); v <= Version+1; v++ {
		binary.LittleEndian.PutUint32(b[8:], v)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(segs[0].Path)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		rd, err := OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		s, err := rd.Series(context.Background(), segs[0].Start, segs[0].Start.Add(30*time.Minute), 30)
		switch {
		case err != nil:
			t.Fatal(err)
		case v <= Version && (len(s.Missing) != 0 || s.Minutes < 29):
			t.Fatalf("version %d: %d minutes, missing %v", v, s.Minutes, s.Missing)
		case v > Version && (len(s.Missing) != 1 || !strings.Contains(s.Missing[0], fmt.Sprintf("version %d", Version+1))):
			t.Fatalf("version %d read: missing %v", v, s.Missing)
		}
	}
}

// FuzzSeries reads a segment of any bytes as the graphs would: it answers
// or says what it could not read, with every device's series as long as
// asked.
func FuzzSeries(f *testing.F) {
	dir := f.TempDir()
	feed := recordDay(f, dir, 5)
	segs, err := listSegments(dir)
	if err != nil || len(segs) == 0 {
		f.Fatal(segs, err)
	}
	for _, sg := range segs {
		b, _ := os.ReadFile(sg.Path)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(segMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, segName(feed.start)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		rd, err := OpenReader(d)
		if err != nil {
			t.Fatal(err)
		}
		s, err := rd.Series(context.Background(), feed.start.Add(-time.Hour), feed.start.Add(time.Hour), 12)
		if errors.Is(err, ErrEmpty) && len(rd.Skipped()) == 1 && len(b) >= headerSize {
			// Bytes that do not begin with a segment header are no
			// segment: skipped, and said (the record holds nothing).
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for k, ds := range s.Devices {
			if len(ds.Held) != 12 || len(ds.Util) != 12 || len(ds.Mem) != 12 {
				t.Fatalf("%v: series of %d, %d, %d points", k, len(ds.Held), len(ds.Util), len(ds.Mem))
			}
		}
	})
}
