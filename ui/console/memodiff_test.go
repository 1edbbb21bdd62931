package console

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// memoRig drives consoles with one sequence of messages: two sessions
// sharing a Deriver as serve's do, with different options (theme, ASCII,
// size), each beside a reference console with the same options, its own
// Deriver and no memo, which draws every frame afresh. Whatever a memo or
// a shared derivation keeps that it should not shows as a difference
// between a session and its reference.
type memoRig struct {
	t     testing.TB
	now   time.Time
	s     *model.Snapshot
	gpus  int
	kerns int
	n     int
	// apps[0] and apps[2] share a Deriver; apps[1] and apps[3] are
	// their references.
	apps [4]*App
	log  []string
	// dir is the history record's directory ("": none).
	dir string
}

func newMemoRig(t *testing.T) *memoRig { return newMemoRigIn(t, "") }

// newMemoRigIn is a rig whose consoles read the history record in dir
// ("": none).
func newMemoRigIn(t *testing.T, dir string) *memoRig {
	r := &memoRig{t: t, now: fake.T0.Add(3 * time.Second), gpus: 4, kerns: 6, dir: dir}
	clock := func() time.Time { return r.now }
	r.s = fake.Large(r.gpus, r.kerns)
	r.s.Time = r.now
	shared := render.NewDeriver()
	mk := func(w, h int, theme string, ascii bool, d *render.Deriver, memo bool) *App {
		a := testApp(t, w, h, r.s, Options{Now: clock, Theme: themes.MustBuiltin(theme), ASCII: ascii, Deriver: d, History: r.dir})
		if !memo {
			a.memo = nil
		}
		return a
	}
	r.apps[0] = mk(160, 48, themes.Dark, false, shared, true)
	r.apps[1] = mk(160, 48, themes.Dark, false, render.NewDeriver(), false)
	r.apps[2] = mk(120, 40, themes.Mono, true, shared, true)
	r.apps[3] = mk(120, 40, themes.Mono, true, render.NewDeriver(), false)
	return r
}

// each sends msg to every console.
func (r *memoRig) each(f func(a *App)) {
	for _, a := range r.apps {
		f(a)
	}
}

func (r *memoRig) snap(s *model.Snapshot) {
	r.s = s
	r.each(func(a *App) { feed(a, s) })
}

// tick is the next snapshot, with change applied to it.
func (r *memoRig) tick(n int, change func(s *model.Snapshot)) {
	r.now = r.now.Add(time.Second)
	s := fake.Tick(r.s, n)
	s.Time = r.now
	if change != nil {
		change(s)
	}
	r.snap(s)
}

// step does the seeded random step and checks the frames.
func (r *memoRig) step(rng *rand.Rand) {
	what := ""
	switch op := rng.IntN(25); op {
	case 0, 1, 2:
		what = "idle snapshot"
		r.tick(0, nil)
	case 3, 4:
		r.n++
		what = "moving snapshot"
		r.tick(r.n, nil)
	case 5, 6:
		d := []time.Duration{10 * time.Millisecond, 40 * time.Millisecond, 99 * time.Millisecond,
			100 * time.Millisecond, 960 * time.Millisecond, time.Second, 59 * time.Second, time.Hour}[rng.IntN(8)]
		what = "tick after " + d.String()
		r.now = r.now.Add(d)
		r.each(func(a *App) { a.Update(kit.TickMsg{}) })
	case 7, 8, 9:
		k := []string{"j", "k", "\t", "f", "S", "a", "j", "esc", "\r", "g", "G", "s"}[rng.IntN(12)]
		what = "key " + strconv.Quote(k)
		r.each(func(a *App) {
			if k == "esc" {
				a.Update(keyCode(tea.KeyEscape))
				return
			}
			typeKeys(a, k)
		})
	case 10:
		f := []string{"a", "0", "zz", "i-large", ""}[rng.IntN(5)]
		what = "filter /" + f
		r.each(func(a *App) {
			typeKeys(a, "/"+f)
			a.Update(keyCode(tea.KeyEnter))
		})
	case 11:
		w, h := 60+rng.IntN(160), 12+rng.IntN(50)
		what = fmt.Sprintf("resize %dx%d", w, h)
		r.each(func(a *App) { a.Update(teaSize(w, h)) })
	case 12:
		names := themes.Names()
		n := names[rng.IntN(len(names))]
		what = "theme " + n
		r.each(func(a *App) { a.Update(themeLoadedMsg{t: themes.MustBuiltin(n)}) })
	case 13:
		st := []model.AgentHealthState{model.AgentUp, model.AgentDown}[rng.IntN(2)]
		i := rng.IntN(2)
		what = fmt.Sprintf("agent %d %v", i, st)
		r.tick(0, func(s *model.Snapshot) {
			s.Agents = append([]model.Agent(nil), s.Agents...)
			s.Agents[i].Health = model.AgentHealth{State: st}
			if st == model.AgentDown {
				s.Agents[i].Health.Detail = "connection refused"
			}
		})
	case 14:
		r.gpus, r.kerns = 1+rng.IntN(6), rng.IntN(10)
		what = fmt.Sprintf("new node %d gpus %d kernels", r.gpus, r.kerns)
		r.now = r.now.Add(time.Second)
		s := fake.Large(r.gpus, r.kerns)
		s.Time = r.now
		r.snap(s)
	case 15:
		msg := []string{"hello", "saved", "a longer flash message that takes room"}[rng.IntN(3)]
		what = "flash " + msg
		r.each(func(a *App) { a.Flashf(kit.LvlInfo, msg) })
	case 16:
		what = "source health"
		h := []string{"ok", "degraded"}[rng.IntN(2)]
		r.tick(0, func(s *model.Snapshot) {
			s.Source = model.SourceInfo{Kind: "nvml", Health: h}
			if h != "ok" {
				s.Source.Detail = "nvmlDeviceGetTemperature: GPU is lost"
			}
		})
	case 17:
		sp := []string{"1m", "1h", "1d", "10m"}[rng.IntN(4)]
		what = ":span " + sp
		r.each(func(a *App) {
			typeKeys(a, ":span "+sp)
			a.Update(keyCode(tea.KeyEnter))
		})
	case 18:
		what = "issue"
		r.tick(0, func(s *model.Snapshot) {
			s.Issues = append(append([]model.Issue(nil), s.Issues...), model.Issue{
				Code: "x-" + strconv.Itoa(len(s.Issues)), Severity: model.SevWarning, Message: "something odd"})
		})
	case 19:
		what = "key H (history)"
		r.each(func(a *App) { typeKeys(a, "h") })
	case 20:
		src := []string{"", "degraded", "mock"}[rng.IntN(3)]
		what = "fixture node " + src
		r.now = r.now.Add(time.Second)
		s := fake.Node(fake.Options{Source: src})
		s.Time = r.now
		r.snap(s)
	case 21:
		// A kernel's state and owner learnt late: a new kernel value,
		// the same id.
		ks := r.s.Kernels()
		if len(ks) == 0 {
			what = "no kernel to change"
			break
		}
		i := rng.IntN(len(ks))
		st := []model.KernelState{model.KernelOK, model.KernelStale, model.KernelBroken, model.KernelPending}[rng.IntN(4)]
		what = fmt.Sprintf("kernel %d %s", i, st)
		r.tick(0, func(s *model.Snapshot) {
			ks = slices.Clone(ks)
			k := *ks[i]
			k.State = st
			rec := model.KernelRecord{}
			if k.Record != nil {
				rec = *k.Record
			}
			rec.OwnerUserID = fmt.Sprintf("user-%d-late", rng.IntN(100))
			rec.SessionType = "batch"
			k.Record = &rec
			ks[i] = &k
			s.SetKernels(ks)
		})
	case 22:
		kind := []string{"", "cuda-open", "cuda-fractional"}[rng.IntN(3)]
		what = "plugin " + kind
		r.tick(0, func(s *model.Snapshot) {
			s.Plugin = nil
			if kind != "" {
				s.Plugin = &model.PluginInfo{Kind: kind, Source: "flag"}
			}
		})
	case 23:
		what = "allocator"
		q := []string{"0.01", "0.10", "0.25"}[rng.IntN(3)]
		r.tick(0, func(s *model.Snapshot) {
			s.Allocator.Quantum = model.MustDec(q)
			s.Allocator.Fractional = q != "0.01"
		})
	case 24:
		what = "idle kernels"
		n := rng.IntN(3)
		r.tick(0, func(s *model.Snapshot) { s.IdleKernels = n })
	}
	r.log = append(r.log, what)
	r.check(what)
}

// check compares each session's frame with its reference's, and the
// frame a tick kept with a fresh one at the moment it was composed.
func (r *memoRig) check(what string) {
	r.t.Helper()
	for i := 0; i < 4; i += 2 {
		got, want := r.apps[i].View().Content, r.apps[i+1].View().Content
		if got != want {
			r.t.Fatalf("session %d after %q (steps %q): the frame differs from a fresh console's:\n%s",
				i/2, what, r.log, lineDiff(got, want))
		}
		ref := r.apps[i+1]
		now := r.now
		r.now = ref.composedAt
		fresh := ref.compose()
		if ref.St.ASCII {
			fresh = kit.ASCIIOnly(fresh)
		}
		r.now = now
		if got != fresh {
			r.t.Fatalf("session %d after %q (steps %q): the frame differs from one composed afresh at %v:\n%s",
				i/2, what, r.log, ref.composedAt, lineDiff(got, fresh))
		}
	}
}

// TestMemoDifferential: over long seeded random sequences of snapshots,
// ticks, keys, filters, resizes, themes, flashes, spans and nodes that
// change shape, every session's frame (memo, shared Deriver, a tick
// keeping a recent frame) is its reference console's, drawn afresh.
// FGTOP_MEMO_SEEDS widens the search.
func TestMemoDifferential(t *testing.T) {
	seeds, steps := 6, 150
	if testing.Short() {
		seeds, steps = 2, 60
	}
	if v, err := strconv.Atoi(os.Getenv("FGTOP_MEMO_SEEDS")); err == nil {
		seeds = v
	}
	for seed := range seeds {
		t.Run(strconv.Itoa(seed), func(t *testing.T) {
			r := newMemoRig(t)
			rng := rand.New(rand.NewPCG(uint64(seed), 29))
			for range steps {
				r.step(rng)
			}
		})
	}
}

// TestMemoThemeEverySize: a theme switched at run time is drawn at once
// at every size, the history pane's smallest included.
func TestMemoThemeEverySize(t *testing.T) {
	for _, w := range []int{100, 160, 200} {
		for h := 10; h <= 60; h++ {
			r := newMemoRig(t)
			r.each(func(a *App) { a.Update(teaSize(w, h)) })
			for n := range 3 {
				r.tick(n, nil)
			}
			r.check(fmt.Sprintf("%dx%d", w, h))
			for _, n := range []string{themes.Light, themes.Mono, themes.Dark} {
				r.each(func(a *App) { a.Update(themeLoadedMsg{t: themes.MustBuiltin(n)}) })
				r.check(fmt.Sprintf("%dx%d theme %s", w, h, n))
			}
		}
	}
}

// TestMemoHistoryPaneEverySize: the history pane at every size, drawn
// with the memo of the frame before under another theme, is the pane
// drawn afresh.
func TestMemoHistoryPaneEverySize(t *testing.T) {
	s := fake.Large(4, 4)
	a := testApp(t, 200, 60, s, Options{})
	for n := range 5 {
		s = fake.Tick(s, n)
		feed(a, s)
	}
	for _, w := range []int{100, 159, 160, 200} {
		for h := 1; h <= 30; h++ {
			for _, n := range []string{themes.Light, themes.Dark} {
				_ = a.setTheme(themes.MustBuiltin(n))
				g := newHistoryPane(a.common, a.hist, a.recSpan())
				g.SetSize(w, h)
				a.memo.frame()
				got := strings.Join(g.View(), "\n")
				m := a.memo
				a.memo = nil
				want := strings.Join(g.View(), "\n")
				a.memo = m
				if got != want {
					t.Fatalf("%dx%d theme %s: the memo's pane differs from a fresh one:\n%q\nwant:\n%q", w, h, n, got, want)
				}
			}
		}
	}
}

// TestMemoPastAndLive: in the past (:at) and back (:live), through
// snapshots, ticks, themes, resizes and spans, every session's frame is
// its reference's.
func TestMemoPastAndLive(t *testing.T) {
	dir, past := pastRecord(t)
	r := newMemoRigIn(t, dir)
	upd := func(what string, msg tea.Msg) {
		r.each(func(a *App) {
			_, cmd := a.Update(msg)
			if _, ok := msg.(kit.TickMsg); !ok {
				runCmd(a, cmd)
			}
		})
		r.check(what)
	}
	cmd := func(line string) {
		r.each(func(a *App) { command(a, line) })
		r.check(":" + line)
	}
	for round := range 3 {
		cmd("at " + past[round%2].Time.Add(time.Minute).Format(time.RFC3339))
		for i, a := range r.apps {
			if !a.past.on {
				t.Fatalf("console %d: :at did not show the past", i)
			}
		}
		r.tick(round, nil)
		r.check("snapshot in the past")
		r.now = r.now.Add(40 * time.Millisecond)
		upd("tick", kit.TickMsg{})
		r.now = r.now.Add(time.Second)
		upd("tick", kit.TickMsg{})
		upd("theme", themeLoadedMsg{t: themes.MustBuiltin([]string{themes.Light, themes.Mono, themes.Dark}[round])})
		upd("resize", teaSize(170+round*10, 50))
		cmd("span " + []string{"1h", "1d", "10m"}[round])
		upd("key j", keyRune('j'))
		cmd("live")
		r.tick(round+1, nil)
		r.check("snapshot live")
		upd("resize", teaSize(120+round*20, 40))
	}
}

// TestMemoSessionsConcurrent: serve's sessions run on their own
// goroutines and share one Deriver; sessions with different options fed
// the same snapshots at once each draw their reference's frame (and
// -race sees no session write into a shared derivation).
func TestMemoSessionsConcurrent(t *testing.T) {
	shared := render.NewDeriver()
	snaps := []*model.Snapshot{fake.Large(4, 6)}
	for n := 1; n < 40; n++ {
		s := fake.Tick(snaps[n-1], n%3)
		if n%10 == 0 {
			s = fake.Large(1+n%5, n%7)
			s.Time = fake.T0.Add(time.Duration(n) * time.Second)
		}
		snaps = append(snaps, s)
	}
	type opt struct {
		theme string
		ascii bool
		w, h  int
	}
	opts := []opt{{themes.Dark, false, 160, 48}, {themes.Mono, true, 120, 40}, {themes.Light, false, 200, 60}, {themes.Dark, true, 100, 30}}
	errs := make(chan error, len(opts))
	for _, o := range opts {
		sess := testApp(t, o.w, o.h, nil, Options{Theme: themes.MustBuiltin(o.theme), ASCII: o.ascii, Deriver: shared})
		ref := testApp(t, o.w, o.h, nil, Options{Theme: themes.MustBuiltin(o.theme), ASCII: o.ascii, Deriver: render.NewDeriver()})
		ref.memo = nil
		go func() {
			for i, s := range snaps {
				feed(sess, s)
				feed(ref, s)
				if got, want := sess.View().Content, ref.View().Content; got != want {
					errs <- fmt.Errorf("%v, snapshot %d: the session's frame differs from its reference's:\n%s", o, i, lineDiff(got, want))
					return
				}
			}
			errs <- nil
		}()
	}
	for range opts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzMemoDifferential is TestMemoDifferential over the fuzzer's seeds:
// a seed and a number of steps (at most 80) drive the rig; any session
// frame that differs from its reference's is a memo keyed on too little.
func FuzzMemoDifferential(f *testing.F) {
	f.Add(uint64(0), uint8(40))
	f.Add(uint64(29), uint8(80))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint8) {
		r := newMemoRig(t)
		rng := rand.New(rand.NewPCG(seed, 29))
		for range min(int(steps), 80) {
			r.step(rng)
		}
	})
}
