package screen

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// sharePool is the frames the sessions of TestTransitionsExact draw: a
// few contents that differ by a line or two (as a console's frames do
// from one second to the next), and frames that change what the
// Transitions do not share: the size, the profile, the screen, the
// cursor, the modes.
func sharePool(r *rand.Rand, w, h int) []frame {
	base := make([]string, h)
	for i := range base {
		base[i] = randomLine(r, true) + "\x1b[m"
	}
	// Clusters whose width depends on whether the terminal measures
	// graphemes (2027).
	clusters := []string{"❤️", "👍🏽", "🏳️‍🌈", "e\u0301"}
	var pool []frame
	for k := range 14 {
		lines := append([]string(nil), base...)
		for range 1 + r.IntN(3) {
			// One content in four carries a style across lines, which
			// makes the drawer parse it whole.
			l := randomLine(r, k%4 != 3)
			if k%2 == 0 {
				l = clusters[r.IntN(len(clusters))] + l
			}
			if k%4 != 3 {
				l += "\x1b[m"
			}
			lines[r.IntN(h)] = l
		}
		v := tea.View{Content: strings.Join(lines, "\n"), AltScreen: true, MouseMode: tea.MouseModeCellMotion, WindowTitle: "fgtop node"}
		pool = append(pool, newFrame(v, w, h, colorprofile.TrueColor))
	}
	special := func(i int, change func(*frame)) {
		f := pool[i]
		change(&f)
		pool = append(pool, f)
	}
	special(0, func(f *frame) { f.cursor = tea.NewCursor(3, 2) })
	special(1, func(f *frame) { f.cursor = tea.NewCursor(0, h-1) })
	special(2, func(f *frame) { f.title = "fgtop other" })
	special(3, func(f *frame) { f.mouse = tea.MouseModeAllMotion })
	special(4, func(f *frame) { f.width, f.height = w-6, h-2 })
	special(5, func(f *frame) { f.profile = colorprofile.ANSI256 })
	special(6, func(f *frame) { f.alt = false })
	special(7, func(f *frame) { f.keys.ReportEventTypes = true })
	return pool
}

// TestTransitionsExact: drawers that share a Transitions write, frame for
// frame, the very bytes that drawers computing every change themselves
// write, whatever frames they draw in whatever order, however they join
// late or go their own way, and while other sessions draw on their own
// goroutines. Each session is a pair fed the same frames and events: one
// drawer shares, its twin does not.
func TestTransitionsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 2))
	const w, h = 40, 10
	pool := sharePool(r, w, h)
	common := 14 // the frames the class walks through are the first ones
	const steps, sessions = 300, 10
	// The class's walk: most sessions draw these frames most of the time.
	walk := make([]int, steps)
	for i := range walk {
		walk[i] = r.IntN(common)
	}
	share := NewTransitions()
	envs := [][]string{{"TERM=xterm-256color"}, {"TERM=screen-256color", "LANG=C.UTF-8"}}

	type event struct {
		frame           int // index in pool; -1 for none, -2 before the session started
		sync, graphemes bool
	}
	plans := make([][]event, sessions)
	for s := range plans {
		start := r.IntN(steps / 3) // late joiners
		own := 0.05 + 0.2*float64(s%3)
		for i := range steps {
			e := event{frame: walk[i]}
			switch x := r.Float64(); {
			case i < start:
				e.frame = -2
			case x < own:
				e.frame = r.IntN(len(pool))
			case x < own+0.02:
				e.frame = -1
			}
			// Terminals of one kind answer alike, at the start: the
			// second kind knows synchronized output and graphemes (one
			// session says so before its first frame, the others
			// after); two sessions hear of graphemes late.
			if s%2 == 1 {
				e.sync = i == start
				e.graphemes = i == start+s%3
			}
			if s == 4 { // a terminal of the first kind that knows synchronized output
				e.sync = i == start
			}
			if s >= sessions-2 && i == 2*steps/3+s {
				e.graphemes = true
			}
			plans[s] = append(plans[s], e)
		}
	}

	type pair struct {
		a, b       *drawer
		outA, outB bytes.Buffer
	}
	pairs := make([]*pair, sessions)
	for s := range pairs {
		p := &pair{}
		env := envs[s%2]
		p.a = newDrawer(&p.outA, env, true)
		p.a.share, p.a.canon = share, true
		p.b = newDrawer(&p.outB, env, true)
		p.b.canon = true
		pairs[s] = p
	}
	step := func(d *drawer, e event) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if e.sync {
			d.synced = true
		}
		if e.frame >= 0 {
			f := pool[e.frame]
			d.draw(&f)
		}
	}
	errs := make([]string, sessions)
	// The sessions draw each step at once, on their own goroutines, as
	// serve's do when a snapshot comes.
	for i := range steps {
		var wg sync.WaitGroup
		for s, p := range pairs {
			e := plans[s][i]
			if errs[s] != "" || e.frame == -2 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if e.graphemes {
					p.a.graphemes()
					p.b.graphemes()
				}
				na, nb := p.outA.Len(), p.outB.Len()
				step(p.a, e)
				step(p.b, e)
				if ga, gb := p.outA.String()[na:], p.outB.String()[nb:]; ga != gb {
					errs[s] = fmt.Sprintf("session %d, step %d (frame %d): the shared drawer wrote\n%q\nits twin\n%q", s, i, e.frame, ga, gb)
				}
			}()
		}
		wg.Wait()
	}
	for s, p := range pairs {
		na, nb := p.outA.Len(), p.outB.Len()
		p.a.stop()
		p.b.stop()
		if ga, gb := p.outA.String()[na:], p.outB.String()[nb:]; errs[s] == "" && ga != gb {
			errs[s] = fmt.Sprintf("session %d restored its terminal with\n%q\nits twin with\n%q", s, ga, gb)
		}
	}
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	hits, misses := share.Stats()
	t.Logf("%d changes written from the store, %d computed", hits, misses)
	// The sessions of one terminal kind that drew the class's frame at
	// one step and the next all but one write the change from the store:
	// the first computes it while the others wait.
	least := 0
	class := func(s int) int {
		if s == 4 {
			return 2
		}
		return s % 2
	}
	for i := 1; i < steps; i++ {
		var group [3]int
		for s := range sessions - 2 { // the last two change their class midway
			prev, cur := plans[s][i-1], plans[s][i]
			if prev.frame == walk[i-1] && cur.frame == walk[i] && (i < 3 || plans[s][i-3].frame != -2) {
				group[class(s)]++
			}
		}
		for _, k := range group {
			least += max(k-1, 0)
		}
	}
	if hits < int64(least) || least < 300 {
		t.Errorf("%d changes written from the store, want at least %d: the sessions did not share", hits, least)
	}
}

// TestTransitionsCatchUp: a drawer that wrote frames from the store and
// then draws a frame of its own (a key's) writes what a drawer that drew
// every frame itself writes, for every pair of frames of a dense console
// page, also when only one line changed.
func TestTransitionsCatchUp(t *testing.T) {
	pages := []string{styledPage(0), styledPage(1), styledPage(2)}
	env := []string{"TERM=xterm-256color"}
	share := NewTransitions()
	var leadOut, outA, outB bytes.Buffer
	lead := newDrawer(&leadOut, env, true)
	lead.share, lead.canon = share, true
	a := newDrawer(&outA, env, true)
	a.share, a.canon = share, true
	b := newDrawer(&outB, env, true)
	b.canon = true
	frameOf := func(i int) *frame {
		f := newFrame(tea.View{Content: pages[i], AltScreen: true}, 160, 48, colorprofile.TrueColor)
		return &f
	}
	// The lead computes 0 → 1 → 2 → 0; a writes them from the store.
	for _, i := range []int{0, 1, 2, 0} {
		lead.draw(frameOf(i))
		a.draw(frameOf(i))
		b.draw(frameOf(i))
	}
	if hits, _ := share.Stats(); hits != 4 {
		t.Fatalf("%d changes written from the store, want 4", hits)
	}
	if a.rlast == a.last {
		t.Fatal("the sharing drawer's renderer drew the frames itself")
	}
	// Now a goes its own way: 0 → 2 is not stored (the lead drew 0 → 1,
	// 1 → 2 and 2 → 0), so a catches up with frame 0 and computes it.
	na, nb := outA.Len(), outB.Len()
	a.draw(frameOf(2))
	b.draw(frameOf(2))
	if ga, gb := outA.String()[na:], outB.String()[nb:]; ga != gb {
		t.Fatalf("after catching up the drawer wrote\n%q\na drawer that drew every frame\n%q", ga, gb)
	}
	if outA.String() != outB.String() {
		t.Error("the sharing drawer wrote other bytes than its twin")
	}
}

// BenchmarkDrawShared: the cost to one of many sessions of a change
// another session computed (hash, compare, write), against
// BenchmarkDrawOneLineChanged.
func BenchmarkDrawShared(b *testing.B) {
	env := []string{"TERM=xterm-256color"}
	share := NewTransitions()
	lead := newDrawer(io.Discard, env, true)
	lead.share, lead.canon = share, true
	d := newDrawer(io.Discard, env, true)
	d.share, d.canon = share, true
	pages := [2]frame{
		newFrame(tea.View{Content: styledPage(0), AltScreen: true}, 160, 48, colorprofile.TrueColor),
		newFrame(tea.View{Content: styledPage(1), AltScreen: true}, 160, 48, colorprofile.TrueColor),
	}
	for i := range 2 {
		lead.draw(&pages[i])
		d.draw(&pages[i])
	}
	// Each session composes its own frame, equal to the others'.
	var own [2]frame
	for i := range own {
		own[i] = pages[i]
		own[i].content = strings.Clone(pages[i].content)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d.draw(&own[i%2])
	}
}

// TestTransitionsClassesBounded: clients that each name another terminal
// type do not make the store grow without bound, and a drawer whose class
// was forgotten still draws what its twin draws.
func TestTransitionsClassesBounded(t *testing.T) {
	share := NewTransitions()
	f := newFrame(tea.View{Content: "a\nb", AltScreen: true}, 10, 2, colorprofile.TrueColor)
	g := newFrame(tea.View{Content: "a\nc", AltScreen: true}, 10, 2, colorprofile.TrueColor)
	var keptOut, twinOut bytes.Buffer
	kept := newDrawer(&keptOut, []string{"TERM=xterm-256color"}, true)
	kept.share, kept.canon = share, true
	twin := newDrawer(&twinOut, []string{"TERM=xterm-256color"}, true)
	twin.canon = true
	kept.draw(&f)
	twin.draw(&f)
	for i := range 10 * maxClasses {
		d := newDrawer(io.Discard, []string{"TERM=xterm-" + strconv.Itoa(i)}, true)
		d.share, d.canon = share, true
		d.draw(&f)
	}
	share.mu.Lock()
	n := len(share.classes)
	share.mu.Unlock()
	if n > maxClasses {
		t.Errorf("%d classes kept, want at most %d", n, maxClasses)
	}
	kept.draw(&g)
	twin.draw(&g)
	if keptOut.String() != twinOut.String() {
		t.Errorf("a drawer whose class was forgotten wrote\n%q\nits twin\n%q", keptOut.String(), twinOut.String())
	}
}

// TestTransitionsOnePaintPerChange: sessions at rest in a few states (as
// serve's idle viewers settle on the device each one's cursor started
// on), whose frames all change each step, cost one paint a state and a
// step, however long ago the drawer that meets a change first computed
// one itself, and write what twins computing every change write. With
// more states than a class follows, changes are still exact.
func TestTransitionsOnePaintPerChange(t *testing.T) {
	for _, states := range []int{3, classPainters + 2} {
		t.Run(strconv.Itoa(states)+" states", func(t *testing.T) {
			const w, h, perState, steps = 40, 10, 4, 12
			r := rand.New(rand.NewPCG(29, uint64(states)))
			env := []string{"TERM=xterm-256color"}
			share := NewTransitions()
			type pair struct {
				a, b       *drawer
				outA, outB bytes.Buffer
			}
			// Each state's page; a step changes a line of each.
			pages := make([][]string, states)
			for s := range pages {
				for range h {
					pages[s] = append(pages[s], randomLine(r, true)+"\x1b[m")
				}
			}
			pairs := make([][]*pair, states)
			for s := range pairs {
				for range perState {
					p := &pair{}
					p.a = newDrawer(&p.outA, env, true)
					p.a.share, p.a.canon = share, true
					p.b = newDrawer(&p.outB, env, true)
					p.b.canon = true
					pairs[s] = append(pairs[s], p)
				}
			}
			paints := func() int {
				n := 0
				for _, ps := range pairs {
					for _, p := range ps {
						n += p.a.paints
					}
				}
				share.mu.Lock()
				defer share.mu.Unlock()
				for _, c := range share.classes {
					for _, q := range c.painters {
						n += q.d.paints
					}
				}
				return n
			}
			before := 0
			for i := range steps {
				if i == 2 {
					before = paints()
				}
				for s, ps := range pairs {
					pages[s][r.IntN(h)] = randomLine(r, true) + "\x1b[m"
					f := newFrame(tea.View{Content: strings.Join(pages[s], "\n"), AltScreen: true}, w, h, colorprofile.TrueColor)
					// Each step another drawer of the state meets the
					// change first: its renderer is steps behind.
					for j := range ps {
						p := ps[(i+j)%len(ps)]
						na, nb := p.outA.Len(), p.outB.Len()
						p.a.draw(&f)
						p.b.draw(&f)
						if ga, gb := p.outA.String()[na:], p.outB.String()[nb:]; ga != gb {
							t.Fatalf("state %d, step %d: the shared drawer wrote\n%q\nits twin\n%q", s, i, ga, gb)
						}
					}
				}
			}
			got, want := paints()-before, states*(steps-2)
			hits, misses := share.Stats()
			t.Logf("%d paints for %d changes; %d changes written from the store, %d computed", got, want, hits, misses)
			if states <= classPainters && got != want {
				t.Errorf("%d paints for %d changes of %d states at rest, want one a change", got, want, states)
			}
			share.mu.Lock()
			held := share.painters
			share.mu.Unlock()
			if held > maxPainters {
				t.Errorf("%d painters held, want at most %d", held, maxPainters)
			}
		})
	}
}

// TestSubmitWritesStoredAtOnce: a frame whose change another drawer
// computed is written by submit itself when the drawer is idle, without
// its drawing goroutine; frames are still drawn in the order submitted
// (never one handed to the goroutine after a newer one written at once),
// and the bytes are those of a twin that computes every change of the
// frames drawn.
func TestSubmitWritesStoredAtOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 6))
	const w, h, steps = 40, 10, 400
	pool := sharePool(r, w, h)[:14]
	env := []string{"TERM=xterm-256color"}
	share := NewTransitions()
	lead := newDrawer(io.Discard, env, true)
	lead.share, lead.canon = share, true
	var out bytes.Buffer
	d := newDrawer(&out, env, true)
	d.share, d.canon = share, true
	var mu sync.Mutex
	var drawn []int // step of each frame drawn
	step := map[*frame]int{}
	d.drawn = func(f *frame) {
		mu.Lock()
		drawn = append(drawn, step[f])
		mu.Unlock()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(drawn)
	}
	d.start()
	frames := make([]*frame, steps)
	atOnce := 0
	for i := range steps {
		f := pool[r.IntN(len(pool))]
		frames[i] = &f
		mu.Lock()
		step[&f] = i
		mu.Unlock()
		switch x := r.IntN(10); {
		case x < 6:
			// The lead computed the change; the drawer waits for
			// nothing: submit writes it.
			lead.draw(&f)
			for d.slot.Lock(); d.next != nil; d.slot.Lock() {
				d.slot.Unlock()
				time.Sleep(100 * time.Microsecond)
			}
			d.slot.Unlock()
			d.mu.Lock() // the goroutine's frame drawn
			d.mu.Unlock()
			n := count()
			d.submit(&f)
			if count() == n+1 {
				atOnce++
			}
		case x < 8:
			// A burst: stored and not, the goroutine busy.
			lead.draw(&f)
			d.submit(&f)
		default:
			d.submit(&f) // its own change
		}
	}
	for end := time.Now().Add(10 * time.Second); ; {
		mu.Lock()
		last := len(drawn) > 0 && drawn[len(drawn)-1] == steps-1
		mu.Unlock()
		if last {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the last frame submitted was not drawn within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	d.mu.Lock()
	got := out.String()
	d.mu.Unlock()
	d.stop()
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(drawn); i++ {
		if drawn[i] <= drawn[i-1] {
			t.Fatalf("frame of step %d drawn after that of step %d", drawn[i], drawn[i-1])
		}
	}
	var twinOut bytes.Buffer
	twin := newDrawer(&twinOut, env, true)
	twin.canon = true
	for _, i := range drawn {
		twin.draw(frames[i])
	}
	if got != twinOut.String() {
		t.Errorf("the drawer wrote other bytes than a twin drawing the same %d frames", len(drawn))
	}
	t.Logf("%d of %d frames drawn, %d written by submit at once", len(drawn), steps, atOnce)
	if atOnce < steps/3 {
		t.Errorf("%d frames written by submit at once, want at least %d (the stored changes of an idle drawer)", atOnce, steps/3)
	}
}

// BenchmarkTransitionsAtRest: one step of 40 idle sessions in 4 states
// (10 each) whose dense 160x48 frames each change a line, another
// session meeting each change first at each step; the cost of a step,
// all sessions together.
func BenchmarkTransitionsAtRest(b *testing.B) {
	const states, perState = 4, 10
	env := []string{"TERM=xterm-256color"}
	share := NewTransitions()
	ds := make([][]*drawer, states)
	for s := range ds {
		for range perState {
			d := newDrawer(io.Discard, env, true)
			d.share, d.canon = share, true
			ds[s] = append(ds[s], d)
		}
	}
	lines := make([][]string, states)
	for s := range lines {
		lines[s] = strings.Split(styledPage(s), "\n")
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for s, dd := range ds {
			y := (i + s) % len(lines[s])
			lines[s][y] = strings.Replace(lines[s][y], "ab", "ba", 1)
			if !strings.Contains(lines[s][y], "ab") {
				lines[s][y] = strings.Split(styledPage(s), "\n")[y]
			}
			f := newFrame(tea.View{Content: strings.Join(lines[s], "\n"), AltScreen: true}, 160, 48, colorprofile.TrueColor)
			for j := range dd {
				dd[(i+j)%perState].draw(&f)
			}
		}
	}
}

// TestTransitionsLargeFramesNotPainted: the changes of frames larger than
// maxPaintedCells are computed by the drawers themselves (a painter would
// keep their cells for good), exactly as before.
func TestTransitionsLargeFramesNotPainted(t *testing.T) {
	const w, h = 500, 200
	env := []string{"TERM=xterm-256color"}
	share := NewTransitions()
	var outA, outB bytes.Buffer
	a := newDrawer(&outA, env, true)
	a.share, a.canon = share, true
	b := newDrawer(&outB, env, true)
	b.canon = true
	for i := range 3 {
		f := newFrame(tea.View{Content: strings.Repeat("x", i+1) + "\x1b[m", AltScreen: true}, w, h, colorprofile.TrueColor)
		a.draw(&f)
		b.draw(&f)
	}
	if outA.String() != outB.String() {
		t.Error("the sharing drawer wrote other bytes than its twin")
	}
	share.mu.Lock()
	defer share.mu.Unlock()
	if share.painters != 0 {
		t.Errorf("%d painters made for %dx%d frames, want none", share.painters, w, h)
	}
}

// TestTransitionsHashOncePerContent: sessions that took one composed
// frame hold one string, hashed once for all of them; a copy of it, a
// prefix of it (the same memory, shorter) and another content are each
// hashed, and a hash is always the content's.
func TestTransitionsHashOncePerContent(t *testing.T) {
	tr := NewTransitions()
	content := strings.Repeat("a line of a frame\n", 200) + "the last"
	want := func(s string) uint64 { return maphash.String(tr.seed, s) }
	for i := range 5 {
		if h := tr.hash(&frame{content: content}); h != want(content) {
			t.Fatalf("hash %d of the frame is not its content's", i)
		}
	}
	if n := tr.hashed.Load(); n != 1 {
		t.Errorf("one content held by 5 frames was hashed %d times, want once", n)
	}
	for _, other := range []string{strings.Clone(content), content[:len(content)-1], content[1:], strings.Replace(content, "last", "next", 1)} {
		if h := tr.hash(&frame{content: other}); h != want(other) {
			t.Errorf("the hash of %q... is not its content's", other[:20])
		}
	}
	if n := tr.hashed.Load(); n != 5 {
		t.Errorf("after a copy, two slices and another content, %d hashes computed, want 5", n)
	}
}
