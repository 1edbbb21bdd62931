package console

import (
	"math"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
)

// histLen is how many one-second samples a device's history keeps: the
// history graphs' five minutes, with room for their columns' rounding, and
// more than the widest sparkline can show. Three float32 rings of it are
// under 5 KB a device.
const histLen = 360

// ring is a fixed-size series of samples, oldest first; NaN is "no
// reading".
type ring struct {
	v    [histLen]float32
	head int // index of the oldest sample
	N    int
	// still is how many of the newest samples are the newest one (bit
	// for bit, NaN included), at most histLen.
	still int
}

func (r *ring) push(x float32) {
	if r.N > 0 && math.Float32bits(x) == math.Float32bits(r.last()) {
		r.still = min(r.still+1, histLen)
	} else {
		r.still = 1
	}
	if r.N < histLen {
		r.v[(r.head+r.N)%histLen] = x
		r.N++
		return
	}
	r.v[r.head] = x
	r.head = (r.head + 1) % histLen
}

func (r *ring) setLast(x float32) {
	if r.N == 0 {
		r.push(x)
		return
	}
	if math.Float32bits(x) == math.Float32bits(r.last()) {
		return
	}
	r.v[(r.head+r.N-1)%histLen] = x
	r.still = 1
	for i := r.N - 2; i >= 0 && math.Float32bits(r.at(i)) == math.Float32bits(x); i-- {
		r.still++
	}
}

// constantFull reports whether the ring is full of one value: another
// sample of it leaves every view of the ring as it was.
func (r *ring) constantFull() bool { return r.N == histLen && r.still >= histLen }

func (r *ring) last() float32 {
	if r.N == 0 {
		return float32(math.NaN())
	}
	return r.v[(r.head+r.N-1)%histLen]
}

// at returns sample i counted from the oldest.
func (r *ring) at(i int) float32 { return r.v[(r.head+i)%histLen] }

// devHistory is one device's allocation (share of capacity), utilisation
// and memory use (0..1) history, one sample per second of snapshot time;
// sec is the snapshot second of the newest sample.
type devHistory struct {
	alloc, Util, Mem ring
	sec              int64
	// seen is the snapshot that observed the device last: forgetGone
	// drops the devices the snapshot just observed did not name.
	seen *model.Snapshot
}

// sample is what one snapshot says about a device, each 0..1 or NaN for
// no reading.
type sample struct{ alloc, Util, Mem float32 }

func (dh *devHistory) push(s sample) {
	dh.alloc.push(s.alloc)
	dh.Util.push(s.Util)
	dh.Mem.push(s.Mem)
}

func (dh *devHistory) setLast(s sample) {
	dh.alloc.setLast(s.alloc)
	dh.Util.setLast(s.Util)
	dh.Mem.setLast(s.Mem)
}

func (dh *devHistory) last() sample {
	return sample{dh.alloc.last(), dh.Util.last(), dh.Mem.last()}
}

// history is view state: what successive snapshots said about each device.
// It is keyed by snapshot time, not wall time, so a replay or a test with a
// fixed clock draws the same sparklines.
type history map[model.DeviceKey]*devHistory

// observe records a snapshot. Samples falling in the same second replace
// each other (a burst of file changes is one sample); a gap of whole
// seconds repeats the last value, because snapshots are published on change
// and nothing changed in between.
func (h history) observe(s *model.Snapshot, frac func(*model.Device) sample) {
	sec := s.Time.Unix()
	for i := range s.Devices {
		d := &s.Devices[i]
		if !d.IsAccelerator() {
			continue
		}
		k := d.Key()
		x := frac(d)
		dh := h[k]
		if dh != nil {
			dh.seen = s
		}
		switch {
		case dh == nil:
			dh = &devHistory{sec: sec, seen: s}
			h[k] = dh
			dh.push(x)
		case sec <= dh.sec:
			dh.setLast(x)
		default:
			gap := min(sec-dh.sec-1, histLen)
			last := dh.last()
			for range gap {
				dh.push(last)
			}
			dh.push(x)
			dh.sec = sec
		}
	}
	h.forgetGone(s)
}

// forgetGone drops the devices s, just observed, no longer has: those
// observe did not stamp with s. Neither a set made for each snapshot (by
// each of serve's sessions: 1.6 % of the server's CPU at 50 viewers of
// the demo node) nor a scan of the snapshot's devices for each one kept.
func (h history) forgetGone(s *model.Snapshot) {
	for k, dh := range h {
		if dh.seen != s {
			delete(h, k)
		}
	}
}

// retime records a snapshot whose content is the last observed one's, at
// snapshot second sec: each device's last sample again, for each second
// since its newest (observe would compute the same samples). It reports
// whether a view drawn from the history may read otherwise now. geoms are
// the views the frame drew (graphs and sparklines, which are graphs of
// one-second columns): a view reads the same when every sample it drew,
// before and after, is the newest reading, and as many of its columns
// have samples (columns are aligned to whole multiples of their seconds,
// so the oldest one a ring reaches moves with the second).
func (h history) retime(sec int64, geoms []graphGeom) bool {
	moved := false
	for _, dh := range h {
		if sec <= dh.sec {
			continue
		}
		rings := [3]*ring{&dh.alloc, &dh.Util, &dh.Mem}
		var n0 [3]int
		for k, r := range rings {
			n0[k] = r.N
			if len(geoms) > 0 && !moved {
				for _, g := range geoms {
					if r.still < g.covered(r.N, dh.sec) {
						moved = true // a view draws an older, other reading
					}
				}
			}
		}
		last := dh.last()
		for range min(sec-dh.sec, histLen) {
			dh.push(last)
		}
		was := dh.sec
		dh.sec = sec
		if moved || len(geoms) == 0 {
			continue
		}
		for k, r := range rings {
			for _, g := range geoms {
				if r.still < g.covered(r.N, sec) || g.filled(n0[k], was) != g.filled(r.N, sec) {
					moved = true
				}
			}
		}
	}
	return moved
}

// graphGeom is the shape of a view of a ring: a graph's columns and the
// seconds each stands for; a sparkline w cells wide is {w, 1}.
type graphGeom struct{ cols, perCol int }

// buckets is how many of the view's columns a ring of n samples whose
// newest is of second lastSec reaches (ring.columns), and how many of the
// samples they take.
func (g graphGeom) buckets(n int, lastSec int64) (cols, samples int) {
	if n <= 0 {
		return 0, 0
	}
	p := int64(max(g.perCol, 1))
	w := int64(min(g.cols, maxCols))
	if w <= 0 {
		return 0, 0
	}
	first := lastSec - floorDiv(lastSec, p)*p + 1 // seconds in the newest column
	c := int64(1)
	if rest := int64(n) - first; rest > 0 {
		c += (rest + p - 1) / p
	}
	return int(min(c, w)), int(min(int64(n), first+(w-1)*p))
}

func (g graphGeom) filled(n int, lastSec int64) int {
	c, _ := g.buckets(n, lastSec)
	return c
}

func (g graphGeom) covered(n int, lastSec int64) int {
	_, s := g.buckets(n, lastSec)
	return s
}

// noteGeom adds a view's shape to geoms (nil: not collected), once.
func noteGeom(geoms *[]graphGeom, g graphGeom) {
	if geoms == nil || slices.Contains(*geoms, g) {
		return
	}
	*geoms = append(*geoms, g)
}

// sparkline draws the newest w samples of r, right-aligned, exactly w
// cells. levels[0] is the blank for zero or no reading; any non-zero value
// shows at least the lowest bar.
func sparkline(r *ring, w int, levels []string) string {
	if w <= 0 {
		return ""
	}
	if r == nil {
		return kit.Spaces(w)
	}
	var b strings.Builder
	n := min(r.N, w)
	b.WriteString(kit.Spaces(w - n))
	top := len(levels) - 1
	for i := r.N - n; i < r.N; i++ {
		v := r.at(i)
		idx := 0
		if !math.IsNaN(float64(v)) && v > 0 {
			idx = max(1, int(math.Round(math.Min(float64(v)*float64(top), float64(top)))))
		}
		b.WriteString(levels[idx])
	}
	return b.String()
}

// maxCols bounds how many columns one graph draws from a ring.
const maxCols = 512

// columns fills dst, oldest column first, with the mean reading of each
// perCol-second bucket ending at snapshot second lastSec, NaN where a
// bucket has no reading (none taken yet, or none given). Buckets are
// aligned to whole multiples of perCol seconds, not to the newest sample,
// so a graph scrolls one column at a time instead of every column
// shifting a little each second.
func (r *ring) columns(dst []float32, lastSec int64, perCol int) {
	nan32 := float32(math.NaN())
	for i := range dst {
		dst[i] = nan32
	}
	if r == nil || len(dst) == 0 {
		return
	}
	perCol = max(perCol, 1)
	dst = dst[:min(len(dst), maxCols)]
	var count [maxCols]uint16
	// Summed in float64, where adding a few hundred float32 readings is
	// exact: a bucket of equal readings has exactly that reading for its
	// mean, so an idle device's graph is the same from one second to the
	// next (the view memo keeps it) rather than off in the last bit.
	var sum [maxCols]float64
	// Newest sample first, one second back each: left is how many
	// seconds of the current bucket remain, starting with the newest
	// bucket's, which ends at lastSec.
	p := int64(perCol)
	left := lastSec - floorDiv(lastSec, p)*p + 1
	c := len(dst) - 1
	idx := (r.head + r.N - 1) % histLen
	for range r.N {
		if c < 0 {
			break
		}
		if v := r.v[idx]; !math.IsNaN(float64(v)) {
			sum[c] += float64(v)
			count[c]++
		}
		if left--; left == 0 {
			c--
			left = p
		}
		if idx--; idx < 0 {
			idx = histLen - 1
		}
	}
	for c := range dst {
		if count[c] > 0 {
			dst[c] = float32(sum[c] / float64(count[c]))
		}
	}
}

// floorDiv is a/b rounded towards minus infinity (b > 0), so buckets
// stay aligned for times before the epoch too.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
