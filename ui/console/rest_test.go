package console

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// restRig drives a console and its reference (no memo, every frame
// composed afresh) with one sequence of messages on one fixed clock.
type restRig struct {
	t    *testing.T
	now  time.Time
	s    *model.Snapshot
	a, b *App
	gen  uint64
	// composed counts the frames a composed.
	composed int
}

func newRestRig(t *testing.T, s *model.Snapshot, w, h int) *restRig {
	r := &restRig{t: t, now: fake.T0.Add(3 * time.Second), gen: 1}
	clock := func() time.Time { return r.now }
	s.Time, s.Gen = r.now, r.gen
	r.s = s
	r.a = testApp(t, w, h, s, Options{Now: clock})
	r.b = testApp(t, w, h, s, Options{Now: clock})
	r.b.memo = nil
	r.a.View()
	return r
}

func (r *restRig) each(f func(a *App)) { f(r.a); f(r.b) }

// view is a's frame, counting the compositions.
func (r *restRig) view() string {
	if !r.a.FrameOK {
		r.composed++
	}
	return r.a.View().Content
}

// freshAt is the reference's frame composed afresh at t.
func (r *restRig) freshAt(t time.Time) string {
	now := r.now
	r.now = t
	defer func() { r.now = now }()
	r.b.Invalidate()
	return r.b.View().Content
}

// snap delivers the current content again at now (the engine's retimed
// snapshot: same Gen) or, with n > 0, moved readings under a new Gen.
func (r *restRig) snap(n int) {
	s := fake.Tick(r.s, n)
	if n == 0 {
		c := *r.s
		s = &c
		s.Seq++
	} else {
		r.gen++
	}
	s.Time, s.Gen = r.now, r.gen
	r.s = s
	feed(r.a, s)
	// The reference derives every snapshot (no Gen: nothing to go by).
	c := *s
	c.Gen = 0
	feed(r.b, &c)
}

// check: a's frame is the one composed afresh now, and afresh at any
// instant before the frame's expiry (the earliest of its own texts'
// changes and the header's "updated ... ago").
func (r *restRig) check(what string, rng *rand.Rand) {
	r.t.Helper()
	got := r.view()
	if want := r.freshAt(r.now); got != want {
		r.t.Fatalf("%s: the frame differs from one composed afresh now:\n%s", what, lineDiff(got, want))
	}
	exp := r.a.staleAt
	if _, next := updatedSpan(r.a.Snap, r.now); !next.IsZero() && (exp.IsZero() || next.Before(exp)) {
		exp = next
	}
	if exp.IsZero() {
		exp = r.now.Add(time.Hour)
	}
	if exp.Before(r.now) {
		r.t.Fatalf("%s: the frame expired at %v, before now %v", what, exp, r.now)
	}
	for range 3 {
		at := r.now.Add(time.Duration(rng.Int64N(int64(exp.Sub(r.now)) + 1)))
		if at.Equal(exp) {
			continue
		}
		if want := r.freshAt(at); got != want {
			r.t.Fatalf("%s: the frame (expiring at %v) differs from one composed afresh %v later:\n%s",
				what, exp, at.Sub(r.now), lineDiff(got, want))
		}
	}
}

// restOp is one kind of step of a random walk at rest: it acts on both
// consoles of the rig and says what it did.
type restOp struct {
	weight int
	do     func(r *restRig, rng *rand.Rand) string
}

// walkRest runs steps operations, drawn by weight, on rigs of six seeds
// (on the PCG stream given) and checks the frame after each (restRig.check).
func walkRest(t *testing.T, stream uint64, steps int, ops []restOp) {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, stream))
		r := newRestRig(t, fake.Large(1+rng.IntN(5), rng.IntN(12)), 100+rng.IntN(140), 24+rng.IntN(40))
		for step := range steps {
			n, what := rng.IntN(total), ""
			for _, o := range ops {
				if n < o.weight {
					what = o.do(r, rng)
					break
				}
				n -= o.weight
			}
			r.check(fmt.Sprintf("seed %d step %d (%s)", seed, step, what), rng)
		}
	}
}

// The steps both walks take: the engine's retimed snapshot of the same
// content at about a second, one of moved readings, and the clock firing
// after one of ds.
func restSame(weight int) restOp {
	return restOp{weight, func(r *restRig, rng *rand.Rand) string {
		r.now = r.now.Add([]time.Duration{time.Second, 990 * time.Millisecond, 1010 * time.Millisecond, 3 * time.Second}[rng.IntN(4)])
		r.snap(0)
		return "same content"
	}}
}

func restMoved(weight int) restOp {
	return restOp{weight, func(r *restRig, rng *rand.Rand) string {
		r.now = r.now.Add(time.Second)
		r.snap(1 + rng.IntN(50))
		return "moved readings"
	}}
}

func restTick(weight int, ds ...time.Duration) restOp {
	return restOp{weight, func(r *restRig, rng *rand.Rand) string {
		d := ds[rng.IntN(len(ds))]
		r.now = r.now.Add(d)
		r.each(func(a *App) { a.Update(clockMsg{}) })
		return "tick after " + d.String()
	}}
}

// restKeys types one of keys.
func restKeys(weight int, keys ...string) restOp {
	return restOp{weight, func(r *restRig, rng *rand.Rand) string {
		k := keys[rng.IntN(len(keys))]
		r.each(func(a *App) { typeKeys(a, k) })
		return "key " + k
	}}
}

// TestRestFrameExact: over seeded random sequences of snapshots of the
// same content (what the engine publishes at rest), snapshots that move,
// ticks at any phase, flashes, themes and keys, the console's frame after
// every message is the one a console composes afresh at that instant, and
// at any instant before the expiry the frame noted. (The frame is composed
// only where a text moved: TestRestComposesNothing.)
func TestRestFrameExact(t *testing.T) {
	walkRest(t, 29, 400, []restOp{
		restSame(5),
		restMoved(2),
		restTick(3, 10*time.Millisecond, 400*time.Millisecond, 960*time.Millisecond, time.Second,
			1050*time.Millisecond, 59*time.Second, time.Hour),
		{1, func(r *restRig, _ *rand.Rand) string {
			r.each(func(a *App) { a.Flashf(kit.LvlInfo, "hello") })
			return "flash"
		}},
		{1, func(r *restRig, rng *rand.Rand) string {
			names := themes.Names()
			n := names[rng.IntN(len(names))]
			r.each(func(a *App) { a.Update(themeLoadedMsg{t: themes.MustBuiltin(n)}) })
			return "theme " + n
		}},
		restKeys(1, "j", "k", "h", "\t"),
	})
}

// TestRestComposesNothing: a node at rest (the same content each second,
// no kernel ages on screen) composes no frame once its graphs and
// sparklines are as wide as they get (before, they grow). A snapshot that moves a reading is composed at once, and a tick
// without any snapshot composes only when "updated ... ago" turns over.
func TestRestComposesNothing(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}, {240, 70}} {
		r := newRestRig(t, fake.Large(4, 0), size[0], size[1])
		rng := rand.New(rand.NewPCG(1, 2))
		for range histLen + 5 {
			r.now = r.now.Add(time.Second)
			r.snap(0)
			r.check("filling", rng)
		}
		r.composed = 0
		for i := range 300 {
			// The poll's phase wanders a little, as a loaded machine's does.
			r.now = r.now.Add(time.Second + time.Duration(i%7-3)*time.Millisecond)
			r.snap(0)
			r.check("at rest", rng)
		}
		if r.composed != 0 {
			t.Errorf("%dx%d: %d frames composed in 300 s at rest", size[0], size[1], r.composed)
		}
		r.now = r.now.Add(time.Second)
		r.snap(7)
		r.check("moved", rng)
		if r.composed != 1 {
			t.Errorf("%dx%d: a moved reading composed %d frames", size[0], size[1], r.composed)
		}
		// The engine goes quiet: the clock alone.
		r.composed = 0
		for range 10 {
			r.now = r.now.Add(TickInterval + tickGrace)
			r.each(func(a *App) { a.Update(clockMsg{}) })
			r.check("clock", rng)
		}
		if r.composed != 10 {
			t.Errorf("%dx%d: 10 seconds without a snapshot composed %d frames, want 10 (updated ... ago)", size[0], size[1], r.composed)
		}
	}
}

// lineDiff shows the lines where got and want differ, without colour.
func lineDiff(got, want string) string {
	g, w := strings.Split(stripANSI(got), "\n"), strings.Split(stripANSI(want), "\n")
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			fmt.Fprintf(&b, "line %d:\n got: %s\nwant: %s\n", i, gl, wl)
		}
	}
	return b.String()
}

// TestGraphGeomFilled: for a full ring of one reading, filled says how
// many columns ring.columns gives a value, whatever the graph's width,
// seconds a column and newest second; retime then tells a graph that
// moves from one that does not.
func TestGraphGeomFilled(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 29))
	var r ring
	for range histLen {
		r.push(0.25)
	}
	if !r.constantFull() {
		t.Fatal("a full ring of one value is not constantFull")
	}
	for range 5000 {
		g := graphGeom{cols: 1 + rng.IntN(600), perCol: 1 + rng.IntN(12)}
		sec := 1_700_000_000 + rng.Int64N(100_000)
		vals := make([]float32, g.cols)
		r.columns(vals, sec, g.perCol)
		n := 0
		for _, v := range vals {
			if !math.IsNaN(float64(v)) {
				n++
			}
		}
		if got := g.filled(histLen, sec); got != n {
			t.Fatalf("%+v at %d: filled %d, columns has %d", g, sec, got, n)
		}
	}
	// Rings not yet full: filled counts the columns with samples, and no
	// sample older than covered shows in any column.
	for range 5000 {
		g := graphGeom{cols: 1 + rng.IntN(600), perCol: 1 + rng.IntN(12)}
		sec := 1_700_000_000 + rng.Int64N(100_000)
		n := 1 + rng.IntN(histLen)
		cov := g.covered(n, sec)
		var rr ring
		for i := range n {
			v := float32(0)
			if i < n-cov {
				v = 1
			}
			rr.push(v)
		}
		vals := make([]float32, g.cols)
		rr.columns(vals, sec, g.perCol)
		got := 0
		for _, v := range vals {
			if !math.IsNaN(float64(v)) {
				got++
				if v != 0 {
					t.Fatalf("%+v at %d, %d samples: a sample older than the %d covered shows", g, sec, n, cov)
				}
			}
		}
		if f := g.filled(n, sec); f != got {
			t.Fatalf("%+v at %d, %d samples: filled %d, columns has %d", g, sec, n, f, got)
		}
	}
	// A still device's history under a graph 200 columns of 2 s: the
	// oldest column comes and goes with the second.
	h := history{{Name: "cuda", ID: "g"}: &devHistory{sec: 1000}}
	for _, rg := range []*ring{&h[model.DeviceKey{Name: "cuda", ID: "g"}].alloc, &h[model.DeviceKey{Name: "cuda", ID: "g"}].Util, &h[model.DeviceKey{Name: "cuda", ID: "g"}].Mem} {
		for range histLen {
			rg.push(0)
		}
	}
	wide, narrow := []graphGeom{{cols: 200, perCol: 2}}, []graphGeom{{cols: 60, perCol: 5}}
	if !h.retime(1001, wide) || !h.retime(1002, wide) || !h.retime(1003, wide) {
		t.Error("a 200-column graph of 2 s columns: retime does not follow its oldest column")
	}
	if h.retime(1004, narrow) || h.retime(1100, narrow) {
		t.Error("a 60-column graph a full ring covers moved")
	}
}
