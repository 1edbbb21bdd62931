package history

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fgtop/fgtop/model"
)

// MaxSeriesCols bounds how many points one Series call draws per device
// (a week of minutes), and maxSeriesDevices how many devices (eight GPUs
// of seven MIG slices each, twice over): a series is held in memory
// whole, under 50 MiB at both bounds while it is summed.
const (
	MaxSeriesCols    = 7 * 24 * 60
	maxSeriesDevices = 128
)

// DeviceSeries is one device's per-column means over a span, each 0..1 (the
// held share may exceed 1 on an over-committed device), NaN where the
// record has no reading for that column.
type DeviceSeries struct {
	Held, Util, Mem []float32
}

// Series is what the per-minute summaries say about every device over a
// span, in equal columns of Step, oldest first: column i covers
// [From+i*Step, From+(i+1)*Step).
type Series struct {
	From, To time.Time
	Step     time.Duration
	Devices  map[model.DeviceKey]*DeviceSeries
	// Minutes is how many summaries fell in the span; NoHeld how many of
	// them predate format version 2 and so say nothing of allocation.
	Minutes, NoHeld int
	// Missing says which segments could not be read (their columns are
	// gaps).
	Missing []string
}

// Series reads the per-minute summaries recorded in [from, to) and
// averages them into cols columns per device. Only the segments that
// overlap the span are read, checkpoints skipped; ctx bounds the time.
func (r *Reader) Series(ctx context.Context, from, to time.Time, cols int) (*Series, error) {
	if cols <= 0 || cols > MaxSeriesCols {
		return nil, fmt.Errorf("history series: %d columns (1 to %d)", cols, MaxSeriesCols)
	}
	if !to.After(from) {
		return nil, fmt.Errorf("history series: empty span %s to %s", fmtTime(from), fmtTime(to))
	}
	if len(r.segs) == 0 {
		return nil, r.empty()
	}
	step := to.Sub(from) / time.Duration(cols)
	if step <= 0 {
		step = 1
	}
	s := &Series{From: from, To: to, Step: step, Devices: map[model.DeviceKey]*DeviceSeries{}}
	type acc struct{ held, util, mem []float64 }
	type cnt struct{ held, util, mem []uint32 }
	sums := map[model.DeviceKey]*acc{}
	counts := map[model.DeviceKey]*cnt{}
	// The bound reaches into each segment's decompression too: one
	// segment cannot outlast it.
	defer func(old context.Context) { r.ctx = old }(r.ctx)
	r.ctx = ctx
	for i := range r.segs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("history series: %w", err)
		}
		if !r.segs[i].Start.Before(to) {
			break
		}
		// A segment's minutes end where the next one starts.
		if i+1 < len(r.segs) && !r.segs[i+1].Start.After(from) {
			continue
		}
		sr := r.read(i, true)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("history series: %w", err)
		}
		if sr.err != nil || sr.data == nil {
			s.Missing = append(s.Missing, fmt.Sprintf("segment from %s unreadable: %v", fmtTime(r.segs[i].Start), sr.err))
			continue
		}
		it := recIter{b: sr.data.Deltas}
		for {
			typ, body, ok := it.next()
			if !ok {
				break
			}
			if typ != recMinute {
				continue
			}
			var m minuteRec
			if jsonUnmarshal(body, &m) != nil || m.Start.Before(from) || !m.Start.Before(to) {
				continue
			}
			c := int(m.Start.Sub(from) / step)
			if c < 0 || c >= cols {
				continue
			}
			s.Minutes++
			noHeld := true
			for _, d := range m.Devices {
				a := sums[d.Key]
				if a == nil {
					if len(sums) >= maxSeriesDevices {
						continue
					}
					a = &acc{make([]float64, cols), make([]float64, cols), make([]float64, cols)}
					sums[d.Key] = a
					counts[d.Key] = &cnt{make([]uint32, cols), make([]uint32, cols), make([]uint32, cols)}
				}
				n := counts[d.Key]
				if d.HeldAvg != nil {
					noHeld = false
					a.held[c] += *d.HeldAvg
					n.held[c]++
				}
				if d.UtilAvg != nil {
					a.util[c] += *d.UtilAvg / 100
					n.util[c]++
				}
				if d.MemAvg != nil && d.MemTotal != nil && *d.MemTotal > 0 {
					a.mem[c] += min(*d.MemAvg/float64(*d.MemTotal), 1)
					n.mem[c]++
				}
			}
			if noHeld && len(m.Devices) > 0 {
				s.NoHeld++
			}
		}
	}
	mean := func(sum []float64, n []uint32) []float32 {
		out := make([]float32, len(sum))
		for i := range sum {
			out[i] = float32(math.NaN())
			if n[i] > 0 {
				out[i] = float32(sum[i] / float64(n[i]))
			}
		}
		return out
	}
	for k, a := range sums {
		n := counts[k]
		s.Devices[k] = &DeviceSeries{Held: mean(a.held, n.held), Util: mean(a.util, n.util), Mem: mean(a.mem, n.mem)}
	}
	return s, nil
}
