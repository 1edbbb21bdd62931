package console

import (
	"context"
	"math"
	"time"

	tea "charm.land/bubbletea/v2"

	record "github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// graphSpans are the spans `:span` offers beyond the live minutes, each
// drawn from the record's per-minute summaries.
var graphSpans = []struct {
	name string
	d    time.Duration
}{{"1h", time.Hour}, {"1d", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

// Bounds of one read of the record for the graphs: a week of minutes at
// most (one point a minute), and a few seconds.
const (
	graphReadTimeout = 5 * time.Second
	// graphRefresh is how often a span from the record is read again: a
	// new point appears once a minute.
	graphRefresh = time.Minute
)

// graphSpan is the history graphs' span: zero is the live minutes from
// the console's own samples; otherwise name and d say how far back the
// record is drawn, and series is what was last read.
type graphSpan struct {
	name   string
	d      time.Duration
	series *record.Series
	readAt time.Time
	// gen tells a stale answer (the span changed since it was asked).
	gen int
}

// graphSeriesMsg is a span read off the Update loop.
type graphSeriesMsg struct {
	id     int // the read's (recordReads)
	gen    int
	series *record.Series
	err    error
}

// spanCommand runs `:span [5m|live|1h|1d|7d]`.
func (a *App) spanCommand(f []string) tea.Cmd {
	usage := "usage: :span 5m|1h|1d|7d (5m: live; longer spans are drawn from the record)"
	if len(f) < 2 {
		a.Flashf(kit.LvlInfo, usage)
		return nil
	}
	switch f[1] {
	case "5m", "live":
		a.graph = graphSpan{gen: a.graph.gen + 1}
		if a.reads.inFlight(readGraph) {
			a.reads.cancel()
		}
		a.Flashf(kit.LvlInfo, "history graphs: last 5m, live")
		return nil
	}
	for _, s := range graphSpans {
		if s.name != f[1] {
			continue
		}
		if a.opts.History == "" {
			a.Flashf(kit.LvlWarn, "no history here to graph more than 5m: "+a.noRecordWhy(false))
			a.Flash.Short = "no history here: " + a.noRecordWhy(true)
			return nil
		}
		a.graph = graphSpan{name: s.name, d: s.d, gen: a.graph.gen + 1}
		return a.readGraph()
	}
	a.Flashf(kit.LvlWarn, "no span "+f[1]+"; "+usage)
	return nil
}

// readGraph reads, in a Cmd, the span's per-minute summaries up to now:
// one column a minute, aligned to whole minutes. It replaces any read of
// the record in flight.
func (a *App) readGraph() tea.Cmd {
	g := &a.graph
	if g.d == 0 {
		return nil
	}
	dir, gen := a.opts.History, g.gen
	to := a.Now().Truncate(time.Minute)
	from := to.Add(-g.d)
	cols := int(g.d / time.Minute)
	// Once a span is read, a refresh reads only the minutes since, and
	// the two before them again (a minute is summarised as the next
	// begins, and written within a second of that).
	old := g.series
	if old != nil && old.To.Sub(old.From) == g.d && old.Step == time.Minute && to.After(old.To) && to.Sub(old.To) <= g.d-2*time.Minute {
		from = old.To.Add(-2 * time.Minute)
		cols = int(to.Sub(from) / time.Minute)
	} else {
		old = nil
	}
	g.readAt = a.Now()
	return a.reads.run(readGraph, func(ctx context.Context, id int) tea.Msg {
		rd, err := record.OpenReader(dir)
		if err != nil {
			return graphSeriesMsg{id: id, gen: gen, err: err}
		}
		ctx, cancel := context.WithTimeout(ctx, graphReadTimeout)
		defer cancel()
		s, err := rd.Series(ctx, from, to, cols)
		if err == nil && old != nil {
			s = appendSeries(old, s)
		}
		return graphSeriesMsg{id: id, gen: gen, series: s, err: err}
	}, func(id int) tea.Msg { return graphSeriesMsg{id: id, gen: gen, err: context.Canceled} })
}

// appendSeries is old moved on to tail's end: old's columns shifted left
// by the minutes between their ends, tail's over the newest ones. Both
// have one-minute columns and tail starts within old. old is not changed
// (the screen may still draw it). Minutes, NoHeld and Missing are the
// tail's: what the last read found.
func appendSeries(old, tail *record.Series) *record.Series {
	n := int(tail.To.Sub(tail.From) / time.Minute)
	k := int(tail.To.Sub(old.To) / time.Minute)
	out := &record.Series{From: old.From.Add(time.Duration(k) * time.Minute), To: tail.To, Step: time.Minute,
		Devices: map[model.DeviceKey]*record.DeviceSeries{}, Minutes: tail.Minutes, NoHeld: tail.NoHeld, Missing: tail.Missing}
	width := int(old.To.Sub(old.From) / time.Minute)
	nan := make([]float32, n)
	for i := range nan {
		nan[i] = float32(math.NaN())
	}
	shift := func(o, t []float32) []float32 {
		v := make([]float32, width)
		for i := range v {
			switch {
			case i >= width-n:
				v[i] = t[i-(width-n)]
			case o != nil && i+k < len(o):
				v[i] = o[i+k]
			default:
				v[i] = float32(math.NaN())
			}
		}
		return v
	}
	keys := map[model.DeviceKey]bool{}
	for key := range old.Devices {
		keys[key] = true
	}
	for key := range tail.Devices {
		keys[key] = true
	}
	for key := range keys {
		o, t := old.Devices[key], tail.Devices[key]
		if o == nil {
			o = &record.DeviceSeries{}
		}
		if t == nil {
			t = &record.DeviceSeries{Held: nan, Util: nan, Mem: nan}
		}
		out.Devices[key] = &record.DeviceSeries{Held: shift(o.Held, t.Held), Util: shift(o.Util, t.Util), Mem: shift(o.Mem, t.Mem)}
	}
	return out
}

// graphUpdate takes a span's answer (true: the message is handled), and
// on a live snapshot reads the span again once its newest minute is a
// minute old, leaving the snapshot to the rest of Update.
func (a *App) graphUpdate(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case graphSeriesMsg:
		newest := a.reads.answered(msg.id)
		if msg.gen != a.graph.gen {
			return true
		}
		if !newest {
			// Replaced by another read (an :at): the span is read
			// again with the next snapshot after that one answered.
			a.graph.readAt = time.Time{}
			return true
		}
		if msg.err != nil {
			a.Flashf(kit.LvlWarn, "history graphs: "+msg.err.Error())
			return true
		}
		a.graph.series = msg.series
		a.Invalidate()
		return true
	case SnapshotMsg:
		// A refresh waits for any read in flight: it never replaces one.
		if a.graph.d > 0 && !a.reads.inFlight(0) && a.Now().Sub(a.graph.readAt) >= graphRefresh {
			a.Later = append(a.Later, a.readGraph())
		}
	}
	return false
}

// recSpan is what the history pane draws from the record: the span's name
// and the series, nil when the graphs are live.
type recSpan struct {
	name   string
	series *record.Series
}

func (a *App) recSpan() *recSpan {
	if a.graph.d == 0 || a.graph.series == nil {
		return nil
	}
	return &recSpan{name: a.graph.name, series: a.graph.series}
}

// perCol is the seconds one of w plot columns stands for.
func (r *recSpan) perCol(w int) int {
	return max(1, int(r.series.To.Sub(r.series.From)/time.Second)/max(w, 1))
}

// columns fills dst with the device's series k (0 held, 1 util, 2 mem)
// averaged into len(dst) columns, oldest first; NaN where the record has
// no reading, or no series for the device.
func (r *recSpan) columns(dst []float32, key model.DeviceKey, k int) {
	nan32 := float32(math.NaN())
	for i := range dst {
		dst[i] = nan32
	}
	ds := r.series.Devices[key]
	if ds == nil || len(dst) == 0 {
		return
	}
	src := [3][]float32{ds.Held, ds.Util, ds.Mem}[k]
	resample(dst, src)
}

// resample averages src into dst's columns, each the mean of the readings
// its share of src holds (NaN when none); a column narrower than one
// source point repeats it.
func resample(dst, src []float32) {
	n, w := len(src), len(dst)
	for c := range dst {
		dst[c] = float32(math.NaN())
		j0 := c * n / w
		j1 := max(j0+1, (c+1)*n/w)
		sum, cnt := float32(0), 0
		for j := j0; j < j1 && j < n; j++ {
			if !math.IsNaN(float64(src[j])) {
				sum += src[j]
				cnt++
			}
		}
		if cnt > 0 {
			dst[c] = sum / float32(cnt)
		}
	}
}
