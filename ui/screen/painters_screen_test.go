package screen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// TestPaintersExactOnScreen: many states per class (more than classPainters),
// three classes (more painters wanted than maxPainters), two sizes and two
// profiles inside one class, sessions jumping between states, cursors,
// sync turned on late; each shared drawer's bytes equal its twin's, and
// both leave on an emulated terminal (emu) the screen a fresh drawing of
// the frame leaves (the bytes alone could not tell a renderer's own
// mistake, which twins share: hrev11 found 274-284 wrong screens).
func TestPaintersExactOnScreen(t *testing.T) {
	for _, conc := range []bool{false, true} {
		t.Run(fmt.Sprint("concurrent=", conc), func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 7))
			type st struct {
				w, h  int
				prof  colorprofile.Profile
				lines []string
				cur   *tea.Cursor
			}
			const nstates, sessions, steps = 14, 36, 120
			states := make([]*st, nstates)
			for i := range states {
				s := &st{w: 40, h: 10, prof: colorprofile.TrueColor}
				if os.Getenv("HREV_SIZE") != "0" && i%3 == 1 {
					s.w, s.h = 30, 8
				}
				if os.Getenv("HREV_PROF") != "0" && i%4 == 2 {
					s.prof = colorprofile.ANSI256
				}
				if os.Getenv("HREV_CUR") != "0" && i%5 == 3 {
					s.cur = tea.NewCursor(2, 1)
				}
				for range s.h {
					s.lines = append(s.lines, randomLine(r, true)+"\x1b[m")
				}
				states[i] = s
			}
			envs := [][]string{{"TERM=xterm-256color"}, {"TERM=screen-256color"}, {"TERM=linux"}}
			if e := os.Getenv("HREV_TERM"); e != "" {
				envs = [][]string{{"TERM=" + e}}
			}
			share := NewTransitions()
			type sess struct {
				a, b       *drawer
				outA, outB bytes.Buffer
				state      int
				ea, eb     *emu
			}
			ss := make([]*sess, sessions)
			for i := range ss {
				s := &sess{state: r.IntN(nstates)}
				env := envs[i%len(envs)]
				s.a = newDrawer(&s.outA, env, i%2 == 0)
				s.a.share, s.a.canon = share, true
				s.b = newDrawer(&s.outB, env, i%2 == 0)
				s.b.canon = true
				s.ea, s.eb = newEmu(40, 10, i%2 == 0), newEmu(40, 10, i%2 == 0)
				ss[i] = s
			}
			errs := make([]string, sessions)
			var byteDiffs, wrongA, wrongB, onlyA atomic.Int64
			var mu sync.Mutex
			firstA, firstB := "", ""
			for step := range steps {
				frames := make([]*frame, nstates)
				for i, s := range states {
					s.lines[r.IntN(s.h)] = randomLine(r, true) + "\x1b[m"
					f := newFrame(tea.View{Content: strings.Join(s.lines, "\n"), AltScreen: true, Cursor: s.cur, MouseMode: tea.MouseModeCellMotion}, s.w, s.h, s.prof)
					frames[i] = &f
				}
				jumps := make([]int, sessions)
				syncs := make([]bool, sessions)
				for i, s := range ss {
					jumps[i] = s.state
					if r.IntN(10) == 0 && os.Getenv("HREV_JUMP") != "0" {
						jumps[i] = r.IntN(nstates)
					}
					syncs[i] = step == 60 && i%4 == 0
				}
				order := r.Perm(sessions)
				one := func(i int) {
					s := ss[i]
					if errs[i] != "" {
						return
					}
					s.state = jumps[i]
					f := frames[s.state]
					prev := s.b.last
					na, nb := s.outA.Len(), s.outB.Len()
					for _, d := range []*drawer{s.a, s.b} {
						d.mu.Lock()
						if syncs[i] {
							d.synced = true
						}
						d.draw(f)
						d.mu.Unlock()
					}
					ga, gb := s.outA.String()[na:], s.outB.String()[nb:]
					s.ea.Write([]byte(ga))
					s.eb.Write([]byte(gb))
					if ga != gb {
						byteDiffs.Add(1)
					}
					{
						te := newEmu(40, 10, s.a.mapNl)
						td := newDrawer(te, s.b.environ, s.b.mapNl)
						td.canon, td.synced = true, s.b.synced
						td.draw(f)
						truth := te.screen()
						if s.ea.screen() != truth {
							wrongA.Add(1)
							if s.eb.screen() == truth {
								onlyA.Add(1)
								mu.Lock()
								if firstA == "" {
									firstA = fmt.Sprintf("session %d step %d: shared wrote %q twin %q; shared screen\n%s\ntruth\n%s", i, step, ga, gb, s.ea.text(), te.text())
								}
								mu.Unlock()
							}
						}
						if s.eb.screen() != truth {
							wrongB.Add(1)
							mu.Lock()
							if firstB == "" {
								firstB = fmt.Sprintf("TWIN session %d env %v step %d state %d: twin wrote %q; twin screen\n%s\ntruth\n%s", i, s.b.environ, step, s.state, gb, s.eb.screen(), truth)
							}
							mu.Unlock()
						}
					}
					if sa, sb := s.ea.screen(), s.eb.screen(); sa != sb {
						var fo bytes.Buffer
						fd := newDrawer(&fo, s.b.environ, s.b.mapNl)
						fd.canon, fd.synced = true, s.b.synced
						fresh := ""
						if prev != nil {
							fd.draw(prev)
							n := fo.Len()
							fd.draw(f)
							fresh = fo.String()[n:]
						}
						errs[i] = fmt.Sprintf("session %d step %d state %d: shared wrote\n%q\ntwin\n%q\nfresh\n%q\nfrom %q\nto %q\nscreen shared\n%s\ntwin\n%s", i, step, s.state, ga, gb, fresh, prev.content, f.content, s.ea.text(), s.eb.text())
					}
				}
				if conc {
					var wg sync.WaitGroup
					for _, i := range order {
						wg.Add(1)
						go func() { defer wg.Done(); one(i) }()
					}
					wg.Wait()
				} else {
					for _, i := range order {
						one(i)
					}
				}
			}
			for _, e := range errs {
				if e != "" {
					t.Error(e)
				}
			}
			hits, misses := share.Stats()
			share.mu.Lock()
			held := share.painters
			share.mu.Unlock()
			t.Logf("hits %d misses %d painters %d; %d changes differ in bytes; screens wrong: shared %d twin %d, shared only %d\n%s", hits, misses, held, byteDiffs.Load(), wrongA.Load(), wrongB.Load(), onlyA.Load(), firstA+firstB)
			if held > maxPainters {
				t.Errorf("%d painters", held)
			}
			if byteDiffs.Load() > 0 || wrongA.Load() > 0 || wrongB.Load() > 0 {
				t.Errorf("%d changes differ in bytes from a lone twin's; screens wrong against a fresh drawing: shared %d, twin %d\n%s", byteDiffs.Load(), wrongA.Load(), wrongB.Load(), firstA+firstB)
			}
		})
	}
}
