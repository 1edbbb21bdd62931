package console

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	record "github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// recordedDay records the fixture node's accelerators over the day before
// fake.T0, one telemetry snapshot every 30 s, and returns the per-minute
// means it fed: held share and utilisation per device key.
func recordedDay(t *testing.T, dir string) (held, util map[model.DeviceKey][]float64) {
	t.Helper()
	live := fake.Node(fake.Options{})
	start := fake.T0.Add(-24 * time.Hour)
	now := start
	rec, err := record.Open(record.Options{Dir: dir, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	const minutes = 24 * 60
	held, util = map[model.DeviceKey][]float64{}, map[model.DeviceKey][]float64{}
	for m := range minutes {
		for k := range 2 {
			now = start.Add(time.Duration(m)*time.Minute + time.Duration(k)*30*time.Second)
			s := *live
			s.Seq, s.Time = uint64(m*2+k+1), now
			s.Devices = append([]model.Device(nil), live.Devices...)
			s.Usage = map[model.DeviceKey]*model.DeviceUsage{}
			for i := range s.Devices {
				d := &s.Devices[i]
				if !d.IsAccelerator() || d.CapacityUnknown || d.Capacity.Sign() <= 0 {
					continue
				}
				key := d.Key()
				if held[key] == nil {
					held[key], util[key] = make([]float64, minutes), make([]float64, minutes)
				}
				u := uint32((m/5 + i*17 + k) % 101)
				tel := model.Telemetry{}
				if d.Telemetry != nil {
					tel = *d.Telemetry
				}
				tel.UtilGPU = model.Opt[uint32]{V: u, Valid: true}
				d.Telemetry = &tel
				// A share of the capacity that changes each hour.
				share := model.NewDec(int64((m/60+i)%11), -1)
				amt := d.Capacity.Mul(share)
				s.Usage[key] = &model.DeviceUsage{Key: key, Kernels: 1, Held: model.ResourceSlot{d.Slot: amt}}
				held[key][m] += amt.Float64() / d.Capacity.Float64() / 2
				util[key][m] += float64(u) / 100 / 2
			}
			rec.Observe(&s)
		}
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	now = fake.T0
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return held, util
}

// TestSpanDrawsTheRecordedDay: `:span 1d` draws the history graphs from
// the record: the title says so, and every plot column is the mean of the
// minutes it covers as they were fed to the recorder; `:span 5m` is live
// again.
func TestSpanDrawsTheRecordedDay(t *testing.T) {
	dir := t.TempDir()
	held, util := recordedDay(t, dir)
	if len(held) == 0 {
		t.Fatal("the fixture node has no accelerator with a capacity")
	}
	a := historyApp(t, 200, 60, Options{History: dir})
	command(a, "span 1d")
	if a.graph.series == nil || a.reads.inFlight(readGraph) {
		t.Fatalf("no series after :span 1d (flash %q)", a.Flash.Text)
	}
	const w, h = 200, 40
	checked := 0
	for sel := range a.d.Devs {
		r := &a.d.Devs[sel]
		if held[r.Key] == nil {
			continue
		}
		p := newHistoryPane(a.common, a.hist, a.recSpan())
		p.SetSize(w, h)
		p.Select(sel)
		rows := p.View()
		text := ansi.Strip(strings.Join(rows, "\n"))
		if !strings.Contains(text, "History of "+r.Label) || !strings.Contains(text, "last 1d, from the record") {
			t.Fatalf("%s: the title does not name the span and its source:\n%s", r.Label, text)
		}
		// The big graph's panels: as the pane sizes them, drawn with the
		// fed means.
		n := maxPanels
		wide := len(p.devices()) > 1 && w >= wideWidth
		bw := w
		if wide {
			bw = wideSplit(w)
		}
		for n > 1 && bw < n*panelMinW+(n-1)*panelGap {
			n--
		}
		pw := (bw - (n-1)*panelGap) / n
		plotW := kit.PanelPlotW(pw)
		for k, fed := range [][]float64{held[r.Key], util[r.Key]}[:min(n, 2)] {
			want := make([]float32, plotW)
			const total = 24 * 60
			for c := range want {
				j0 := c * total / plotW
				j1 := max(j0+1, (c+1)*total/plotW)
				sum := 0.0
				for j := j0; j < j1; j++ {
					sum += fed[j]
				}
				want[c] = float32(sum / float64(j1-j0))
			}
			got := make([]float32, plotW)
			p.rec.columns(got, r.Key, k)
			for c := range want {
				if math.IsNaN(float64(got[c])) || math.Abs(float64(got[c]-want[c])) > 1e-4 {
					t.Fatalf("%s series %d column %d of %d: drawn %v, fed %v", r.Label, k, c, plotW, got[c], want[c])
				}
			}
			checked++
			series := kit.GraphSeries{Name: []string{"ALLOC", "UTIL"}[k], Vals: want}
			panel := kit.GraphPanel(a.St, series, pw, h-1, p.rec.perCol(plotW))
			// The plot rows (after the reading's row, before the axis),
			// taken from the pane's rows at this panel's offset.
			off := k * (pw + panelGap)
			for row := 1; row < len(panel)-1; row++ {
				gotRow := ansi.Cut(rows[1+row], off, off+pw)
				if ansi.Strip(gotRow) != ansi.Strip(panel[row]) {
					t.Fatalf("%s panel %d row %d:\n got %q\nwant %q", r.Label, k, row, ansi.Strip(gotRow), ansi.Strip(panel[row]))
				}
			}
		}
	}
	if checked < 2 {
		t.Fatalf("only %d graphs checked", checked)
	}
	command(a, "span 5m")
	if a.recSpan() != nil || strings.Contains(screen(a), "from the record") {
		t.Fatal(":span 5m still draws the record")
	}
}

func TestSpanWithoutHistoryOrBadSpan(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	command(a, "span 1d")
	if a.recSpan() != nil || !strings.Contains(a.Flash.Text, "no history") {
		t.Fatalf("without a history: flash %q", a.Flash.Text)
	}
	a = testApp(t, 160, 48, fake.Node(fake.Options{}), Options{History: t.TempDir()})
	command(a, "span 3w")
	if !strings.Contains(a.Flash.Text, "no span 3w") {
		t.Fatalf("flash %q", a.Flash.Text)
	}
	// An empty history directory: said, and the graphs stay live.
	command(a, "span 1h")
	if a.recSpan() != nil || !strings.Contains(a.Flash.Text, "no record") {
		t.Fatalf("an empty record: flash %q", a.Flash.Text)
	}
}

// TestSpanRefreshReadsOnlyTheNewMinutes: a span read once, then again a
// while later, reads only the minutes since, and draws what a whole new
// read draws.
func TestSpanRefreshReadsOnlyTheNewMinutes(t *testing.T) {
	dir := t.TempDir()
	recordedDay(t, dir)
	now := fake.T0.Add(-47 * time.Minute)
	a := historyApp(t, 200, 60, Options{History: dir, Now: func() time.Time { return now }})
	command(a, "span 1d")
	first := a.graph.series
	if first == nil || !first.To.Equal(now.Truncate(time.Minute)) {
		t.Fatalf("first read: %+v (flash %q)", first, a.Flash.Text)
	}
	now = fake.T0.Add(3 * time.Second)
	_, cmd := a.Update(SnapshotMsg{a.Snap})
	runGraphCmd(a, cmd)
	got := a.graph.series
	if got == first || got.Minutes > 50 || a.reads.inFlight(readGraph) {
		t.Fatalf("the refresh read %d minutes (want the 47 since and 2 again)", got.Minutes)
	}
	rd, err := record.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rd.Series(context.Background(), fake.T0.Add(-24*time.Hour), fake.T0, 24*60)
	if err != nil {
		t.Fatal(err)
	}
	if !got.From.Equal(want.From) || !got.To.Equal(want.To) || len(got.Devices) != len(want.Devices) || len(want.Devices) == 0 {
		t.Fatalf("refreshed %v to %v, %d devices; a whole read %v to %v, %d devices", got.From, got.To, len(got.Devices), want.From, want.To, len(want.Devices))
	}
	for key, w := range want.Devices {
		g := got.Devices[key]
		for k, pair := range [][2][]float32{{g.Held, w.Held}, {g.Util, w.Util}, {g.Mem, w.Mem}} {
			for i := range pair[1] {
				x, y := pair[0][i], pair[1][i]
				if math.IsNaN(float64(x)) != math.IsNaN(float64(y)) || (!math.IsNaN(float64(y)) && x != y) {
					t.Fatalf("%v series %d column %d: refreshed %v, whole read %v", key, k, i, x, y)
				}
			}
		}
	}
}

// runGraphCmd runs the span reads among what cmd asks for (not the
// snapshot listener, which would wait).
func runGraphCmd(a *App, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runGraphCmd(a, c)
		}
	case graphSeriesMsg:
		a.Update(msg)
	}
}
