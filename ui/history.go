package ui

import (
	"math"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// histLen is how many one-second samples a device's history keeps: more
// than the widest sparkline can show.
const histLen = 120

// ring is a fixed-size series of samples, oldest first; NaN is "no
// reading".
type ring struct {
	v    [histLen]float32
	head int // index of the oldest sample
	n    int
}

func (r *ring) push(x float32) {
	if r.n < histLen {
		r.v[(r.head+r.n)%histLen] = x
		r.n++
		return
	}
	r.v[r.head] = x
	r.head = (r.head + 1) % histLen
}

func (r *ring) setLast(x float32) {
	if r.n == 0 {
		r.push(x)
		return
	}
	r.v[(r.head+r.n-1)%histLen] = x
}

func (r *ring) last() float32 {
	if r.n == 0 {
		return float32(math.NaN())
	}
	return r.v[(r.head+r.n-1)%histLen]
}

// at returns sample i counted from the oldest.
func (r *ring) at(i int) float32 { return r.v[(r.head+i)%histLen] }

// devHistory is one device's allocation (share of capacity) and utilisation
// (0..1) history, one sample per second of snapshot time.
type devHistory struct {
	alloc, util ring
	sec         int64
}

// history is view state: what successive snapshots said about each device.
// It is keyed by snapshot time, not wall time, so a replay or a test with a
// fixed clock draws the same sparklines.
type history map[model.DeviceKey]*devHistory

// observe records a snapshot. Samples falling in the same second replace
// each other (a burst of file changes is one sample); a gap of whole
// seconds repeats the last value, because snapshots are published on change
// and nothing changed in between.
func (h history) observe(s *model.Snapshot, frac func(*model.Device) (alloc, util float32)) {
	sec := s.Time.Unix()
	seen := make(map[model.DeviceKey]bool, len(s.Devices))
	for i := range s.Devices {
		d := &s.Devices[i]
		if !d.IsAccelerator() {
			continue
		}
		k := d.Key()
		seen[k] = true
		a, u := frac(d)
		dh := h[k]
		switch {
		case dh == nil:
			dh = &devHistory{sec: sec}
			h[k] = dh
			dh.alloc.push(a)
			dh.util.push(u)
		case sec <= dh.sec:
			dh.alloc.setLast(a)
			dh.util.setLast(u)
		default:
			gap := min(sec-dh.sec-1, histLen)
			la, lu := dh.alloc.last(), dh.util.last()
			for range gap {
				dh.alloc.push(la)
				dh.util.push(lu)
			}
			dh.alloc.push(a)
			dh.util.push(u)
			dh.sec = sec
		}
	}
	for k := range h {
		if !seen[k] {
			delete(h, k)
		}
	}
}

// sparkline draws the newest w samples of r, right-aligned, exactly w
// cells. levels[0] is the blank for zero or no reading; any non-zero value
// shows at least the lowest bar.
func sparkline(r *ring, w int, levels []string) string {
	if w <= 0 {
		return ""
	}
	if r == nil {
		return spaces(w)
	}
	var b strings.Builder
	n := min(r.n, w)
	b.WriteString(spaces(w - n))
	top := len(levels) - 1
	for i := r.n - n; i < r.n; i++ {
		v := r.at(i)
		idx := 0
		if !math.IsNaN(float64(v)) && v > 0 {
			idx = max(1, min(top, int(math.Round(float64(v)*float64(top)))))
		}
		b.WriteString(levels[idx])
	}
	return b.String()
}
