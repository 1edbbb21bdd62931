package console

import (
	"image/color"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/kit"
)

func kernelShorts(a *App) []string {
	var out []string
	for _, ki := range a.Kernels.Showing.Rows {
		out = append(out, a.d.Kernels[ki].Short)
	}
	return out
}

func TestKernelsFollowTheSelectedDevice(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	if got := kernelShorts(a); !slices.Equal(got, []string{"7d0e9b3a", "8e4c2a6f"}) {
		t.Fatalf("GPU0 kernels = %v", got)
	}
	typeKeys(a, "j") // GPU1
	if got := kernelShorts(a); !slices.Equal(got, []string{"c41a8f2d", "d2e3f4a5"}) {
		t.Fatalf("GPU1 kernels = %v", got)
	}
	if !strings.Contains(ansi.Strip(a.View().Content), "ON GPU1") {
		t.Error("the on-device column is missing")
	}
	typeKeys(a, "jjj") // GPU4, in MIG mode: its instances' kernels
	if got := kernelShorts(a); !slices.Equal(got, []string{"5a6b7c8d"}) {
		t.Fatalf("GPU4 (MIG) kernels = %v", got)
	}
	typeKeys(a, "f")
	if got := len(a.Kernels.Showing.Rows); got != 9 {
		t.Fatalf("f: %d kernels, want all 9", got)
	}
	typeKeys(a, "f")
	a.Update(keyCode(tea.KeyEnd)) // the cpu/mem line: every kernel
	if got := len(a.Kernels.Showing.Rows); got != 9 {
		t.Fatalf("cpu line: %d kernels, want all 9", got)
	}
}

func TestFilter(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "f") // all kernels
	tests := []struct {
		Filter string
		want   int
	}{
		{"numa0", 5}, {"!numa0", 4}, {"NUMA0", 5}, {"stale", 1}, {"! stale", 8}, {"GPU2", 2}, {"nothing-matches", 0}, {"", 9},
	}
	for _, tt := range tests {
		a.Update(keyRune('/'))
		a.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		typeKeys(a, tt.Filter)
		a.Update(keyCode(tea.KeyEnter))
		if got := len(a.Kernels.Showing.Rows); got != tt.want {
			t.Errorf("/%s: %d rows, want %d", tt.Filter, got, tt.want)
		}
	}
	// / reopens a kept filter with a space after it: what is typed next
	// is a word of its own (is:idle !numa0, never is:idle!numa0).
	typeKeys(a, "/numa0")
	a.Update(keyCode(tea.KeyEnter))
	typeKeys(a, "/!stale")
	a.Update(keyCode(tea.KeyEnter))
	if a.Kernels.Filter != "numa0 !stale" || len(a.Kernels.Showing.Rows) != 5 {
		t.Errorf("/ on the kept numa0, then !stale: filter %q, %d rows, want 5 (the stale kernel is numa1's)", a.Kernels.Filter, len(a.Kernels.Showing.Rows))
	}
	a.Update(keyCode(tea.KeyEscape))
	typeKeys(a, "/numa1")
	a.Update(keyCode(tea.KeyEscape)) // cancel: back to the filter before
	if a.Kernels.Filter != "" || len(a.Kernels.Showing.Rows) != 9 {
		t.Errorf("esc kept filter %q (%d rows)", a.Kernels.Filter, len(a.Kernels.Showing.Rows))
	}
	typeKeys(a, "/numa1")
	a.Update(keyCode(tea.KeyEnter))
	a.Update(keyCode(tea.KeyEscape)) // esc outside the prompt clears it
	if a.Kernels.Filter != "" {
		t.Errorf("esc did not clear filter %q", a.Kernels.Filter)
	}
}

func TestSort(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "f")
	run := func(cmd string) {
		typeKeys(a, ":"+cmd)
		a.Update(keyCode(tea.KeyEnter))
	}
	run("sort age")
	if got := kernelShorts(a); got[0] != "f0e1d2c3" || got[len(got)-1] != "7d0e9b3a" {
		t.Errorf("sort age: %v", got)
	}
	run("sort shares desc")
	if got := kernelShorts(a); got[0] != "c41a8f2d" {
		t.Errorf("sort shares desc: %v", got)
	}
	run("sort -state")
	if got := kernelShorts(a); !a.Kernels.sortDesc || a.d.Kernels[a.Kernels.Showing.Rows[len(got)-1]].K.State != model.KernelStale {
		t.Errorf("sort -state: %v", got)
	}
	run("sort nosuch")
	if !strings.Contains(a.Flash.Text, "no column nosuch") {
		t.Errorf("flash = %q", a.Flash.Text)
	}
	// An order that is none is said, and the sort kept.
	col, desc := a.Kernels.sortCol, a.Kernels.sortDesc
	run("sort id sideways")
	if !strings.Contains(a.Flash.Text, `usage: :sort COLUMN [asc|desc]; "sideways" is no order`) || a.Kernels.sortCol != col || a.Kernels.sortDesc != desc {
		t.Errorf("sort id sideways: flash %q, sort %s desc=%v", a.Flash.Text, a.Kernels.sortCol, a.Kernels.sortDesc)
	}
	run("sort id asc")
	if a.Kernels.sortCol != "id" || a.Kernels.sortDesc {
		t.Errorf("sort id asc: sort %s desc=%v", a.Kernels.sortCol, a.Kernels.sortDesc)
	}
	before := a.Kernels.sortCol
	typeKeys(a, "s")
	if a.Kernels.sortCol == before {
		t.Error("s did not move to the next column")
	}
	// Clicking the AGENT header sorts by agent.
	a.View()
	r := a.lay.panes[paneKernels]
	for _, c := range a.Kernels.cols {
		if c.Key == "agent" {
			a.Update(tea.MouseClickMsg{X: r.x + c.x, Y: r.y + 1, Button: tea.MouseLeft})
		}
	}
	if a.Kernels.sortCol != "agent" {
		t.Errorf("header click: sort %q", a.Kernels.sortCol)
	}
}

func TestCommands(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	a := testApp(t, 100, 30, fake.Node(fake.Options{}), Options{})
	run := func(cmd string) tea.Cmd {
		typeKeys(a, ":"+cmd)
		_, c := a.Update(keyCode(tea.KeyEnter))
		// :theme loads in a Cmd (it may read a file): run it, as the
		// program would, and hand its message back.
		if c != nil && strings.HasPrefix(cmd, "theme") {
			a.Update(c())
			return nil
		}
		return c
	}
	run("theme light")
	if a.St.Theme.Name != "light" {
		t.Errorf("theme = %s", a.St.Theme.Name)
	}
	run("theme nosuch")
	if a.St.Theme.Name != "light" || a.Flash.Lvl != kit.LvlCrit {
		t.Errorf("bad theme: theme %s, flash %q", a.St.Theme.Name, a.Flash.Text)
	}
	run("bogus")
	if !strings.Contains(a.Flash.Text, "unknown command") {
		t.Errorf("flash = %q", a.Flash.Text)
	}
	if c := run("q"); c == nil || c() != tea.Quit() {
		t.Error(":q does not quit")
	}
}

func TestFlashNewIssuesAndExpiry(t *testing.T) {
	now := fake.T0
	a := testApp(t, 100, 30, fake.Node(fake.Options{}), Options{Now: func() time.Time { return now }})
	if a.Flash.Text != "" {
		t.Fatalf("first snapshot flashed %q: its issues are not news", a.Flash.Text)
	}
	s2 := fake.Node(fake.Options{Source: "degraded"})
	feed(a, s2)
	if !strings.Contains(a.Flash.Text, "device-source") || a.Flash.Lvl != kit.LvlCrit {
		t.Fatalf("new issue flash = %q (level %v)", a.Flash.Text, a.Flash.Lvl)
	}
	feed(a, fake.Node(fake.Options{Source: "degraded"}))
	now = now.Add(5 * time.Second)
	a.Update(kit.TickMsg{})
	if a.Flash.Text == "" {
		t.Fatal("an error flash cleared after 5s")
	}
	now = now.Add(4 * time.Second)
	a.Update(kit.TickMsg{})
	if a.Flash.Text != "" {
		t.Fatalf("flash did not clear itself: %q", a.Flash.Text)
	}
}

// TestAnswerOutlivesNewIssues: a command's answer is not wiped by a new
// issue's flash while it lasts (the demo's busy node replaced "unknown
// command" within 0.3 s); the new issue flashes once the answer is gone.
func TestAnswerOutlivesNewIssues(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	now := fake.T0
	a := testApp(t, 100, 30, fake.Node(fake.Options{}), Options{Now: func() time.Time { return now }})
	typeKeys(a, ":bogus")
	a.Update(keyCode(tea.KeyEnter))
	answer := a.Flash.Text
	if !strings.Contains(answer, "unknown command") {
		t.Fatalf("flash = %q", answer)
	}
	feed(a, fake.Node(fake.Options{Source: "degraded"}))
	if a.Flash.Text != answer {
		t.Fatalf("a new issue replaced the answer at once: %q", a.Flash.Text)
	}
	now = a.Flash.Until
	a.Update(kit.TickMsg{})
	feed(a, fake.Node(fake.Options{Source: "degraded"}))
	if !strings.Contains(a.Flash.Text, "device-source") || a.Flash.Lvl != kit.LvlCrit {
		t.Fatalf("once the answer was gone, the new issue's flash = %q (level %v)", a.Flash.Text, a.Flash.Lvl)
	}
}

// TestBurstAdoptsOncePerFrame: the first snapshot after a quiet frame is
// adopted at once; the rest of a burst within the frame is queued and the
// frame's end adopts the newest one.
func TestBurstAdoptsOncePerFrame(t *testing.T) {
	now := fake.T0
	a := testApp(t, 100, 30, nil, Options{Now: func() time.Time { return now }})
	for i := range 50 {
		s := fake.Node(fake.Options{})
		s.Seq, s.Node = uint64(i), "gpu-node-"+strconv.Itoa(i)
		a.Update(SnapshotMsg{s})
		if a.Snap == nil || a.Snap.Seq != 0 {
			t.Fatalf("after snapshot %d the console shows %v, want the first (0) until the frame ends", i, a.Snap)
		}
		if i > 0 && !a.frameArmed {
			t.Fatal("a queued snapshot armed no frame")
		}
		now = now.Add(frameInterval / 100)
	}
	frame := a.View().Content
	a.Update(frameMsg{})
	if a.Snap.Seq != 49 || a.pending != nil {
		t.Fatalf("adopted %d, want the newest (49)", a.Snap.Seq)
	}
	if a.View().Content == frame {
		t.Error("the frame did not change after adoption")
	}
	// A snapshot after a quiet frame is on screen without waiting.
	now = now.Add(frameInterval)
	s := fake.Node(fake.Options{})
	s.Seq = 50
	a.Update(SnapshotMsg{s})
	if a.Snap.Seq != 50 || a.frameArmed {
		t.Fatalf("after a quiet frame: shows %d, frame armed %v", a.Snap.Seq, a.frameArmed)
	}
}

func TestListenDrainsToNewest(t *testing.T) {
	ch := make(chan *model.Snapshot, 3)
	for i := range 3 {
		ch <- &model.Snapshot{Seq: uint64(i)}
	}
	a := newApp(ch, Options{})
	msg := a.listen()()
	if s := msg.(SnapshotMsg).Snap; s.Seq != 2 {
		t.Fatalf("got seq %d, want the newest", s.Seq)
	}
	close(ch)
	if _, ok := a.listen()().(closedMsg); !ok {
		t.Fatal("a closed channel is not reported")
	}
	a.Update(closedMsg{})
	if !strings.Contains(ansi.Strip(a.View().Content), "engine stopped") {
		t.Error("the header does not say the engine stopped")
	}
	if newApp(nil, Options{}).listen() != nil {
		t.Error("a nil channel should not be listened to")
	}
}

func TestHistory(t *testing.T) {
	h := history{}
	s := fake.Node(fake.Options{})
	frac := func(*model.Device) sample { return sample{0.5, 0.25, 0.1} }
	h.observe(s, frac)
	h.observe(s, frac) // same second: replaces
	k := model.DeviceKey{Name: "cuda", ID: fake.GPU(1)}
	if n := h[k].alloc.N; n != 1 {
		t.Fatalf("same second: %d samples", n)
	}
	s2 := *s
	s2.Time = s.Time.Add(4 * time.Second)
	h.observe(&s2, func(*model.Device) sample { return sample{1, 1, 1} })
	if n := h[k].alloc.N; n != 5 {
		t.Fatalf("after a 4s gap: %d samples, want 5 (gap filled)", n)
	}
	if got := sparkline(&h[k].alloc, 6, kit.UnicodeGlyphs(false).Spark); got != " ▄▄▄▄█" {
		t.Errorf("sparkline = %q", got)
	}
	if got := sparkline(nil, 3, kit.ASCIIGlyphs().Spark); got != "   " {
		t.Errorf("nil sparkline = %q", got)
	}
	var r ring
	for i := range histLen + 10 {
		r.push(float32(i))
	}
	if r.N != histLen || r.at(0) != 10 || r.last() != float32(histLen+9) {
		t.Errorf("ring wrap: n=%d first=%v last=%v", r.N, r.at(0), r.last())
	}
}

func TestMouse(t *testing.T) {
	a := testApp(t, 100, 40, fake.Node(fake.Options{}), Options{})
	a.View()
	r := a.lay.panes[paneDevices]
	a.Update(tea.MouseClickMsg{X: 5, Y: r.y + 2 + 2, Button: tea.MouseLeft}) // third device row
	if a.devices.Cursor != 2 || a.focus != paneDevices {
		t.Fatalf("click: cursor %d focus %d", a.devices.Cursor, a.focus)
	}
	a.Update(tea.MouseWheelMsg{X: 5, Y: r.y + 3, Button: tea.MouseWheelDown})
	if a.devices.Cursor != 3 {
		t.Fatalf("wheel: cursor %d", a.devices.Cursor)
	}
	k := a.lay.panes[paneKernels]
	a.Update(tea.MouseClickMsg{X: 5, Y: k.y + 2, Button: tea.MouseLeft})
	if a.focus != paneKernels {
		t.Fatalf("click in kernels: focus %d", a.focus)
	}
}

func TestThemeDetection(t *testing.T) {
	a := testApp(t, 80, 24, nil, Options{Theme: nil})
	a.opts.Theme = nil
	a.theme = themeChoice{dark: true}
	a.Update(tea.BackgroundColorMsg{Color: color.White})
	if a.St.Theme.Name != themes.Light {
		t.Errorf("light background: theme %s", a.St.Theme.Name)
	}
	a.Update(tea.EnvMsg{"NO_COLOR=1"})
	if a.St.Theme.Name != themes.Mono {
		t.Errorf("NO_COLOR: theme %s", a.St.Theme.Name)
	}
	a.Update(tea.BackgroundColorMsg{Color: color.Black})
	if a.St.Theme.Name != themes.Mono {
		t.Errorf("NO_COLOR then a dark background: theme %s", a.St.Theme.Name)
	}
	// An explicit theme wins over both.
	b := testApp(t, 80, 24, nil, Options{Theme: themes.MustBuiltin(themes.Colorblind)})
	b.Update(tea.EnvMsg{"NO_COLOR=1"})
	b.Update(tea.BackgroundColorMsg{Color: color.White})
	if b.St.Theme.Name != themes.Colorblind {
		t.Errorf("explicit theme replaced by %s", b.St.Theme.Name)
	}
	// Background "light" picks light without asking.
	c := newApp(nil, Options{Background: "light"})
	if c.St.Theme.Name != themes.Light {
		t.Errorf("Background light: theme %s", c.St.Theme.Name)
	}
}

func TestDetailFollowsSnapshots(t *testing.T) {
	a := testApp(t, 100, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "j") // GPU1
	a.Update(keyCode(tea.KeyEnter))
	if ds := detailOf(a); ds == nil || ds.Title != "GPU1" {
		t.Fatalf("detail: top %T %+v", a.top(), ds)
	}
	out := ansi.Strip(a.View().Content)
	for _, want := range []string{"Holdings", "c41a8f2d", "resource.txt", "Processes", "51220", "0.90"} {
		if !strings.Contains(out, want) {
			t.Errorf("device detail lacks %q", want)
		}
	}
	s := fake.Node(fake.Options{})
	s.SetKernels(nil)
	fake.Finish(s)
	feed(a, s)
	if out := ansi.Strip(a.View().Content); !strings.Contains(out, "no kernel holds anything here") {
		t.Errorf("detail not rebuilt from the new snapshot:\n%s", out)
	}
	a.Update(keyCode(tea.KeyEscape))
	if a.ModalOpen() {
		t.Error("esc did not close the detail")
	}
}

func TestKernelDetail(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "j")
	a.Update(keyCode(tea.KeyTab))
	a.Update(keyCode(tea.KeyEnter))
	out := ansi.Strip(a.View().Content)
	for _, want := range []string{"c41a8f2d-3e6b-47d9-a0c5-5b8e2f1d9c63", "i-gpu-node01-numa1", "/config/resource.txt",
		"cuda.shares", "GPU1 (", "0.60", "cores 18-25", "32g", "51220", "drift-not-owner"} {
		if !strings.Contains(out, want) {
			t.Errorf("kernel detail lacks %q:\n%s", want, out)
		}
	}
}

// TestHeaderSidesNeverTouch: at every width the right-hand "updated 3s
// ago" keeps two spaces from whatever the left side ends with.
func TestHeaderSidesNeverTouch(t *testing.T) {
	for w := 40; w <= 200; w++ {
		a := testApp(t, w, 30, fake.Node(fake.Options{}), Options{})
		line := stripANSI(strings.SplitN(a.View().Content, "\n", 2)[0])
		i := strings.Index(line, "updated")
		if i < 0 {
			continue // dropped at this width
		}
		if i < 2 || line[i-2:i] != "  " {
			t.Fatalf("width %d: %q", w, line)
		}
	}
}

// TestAgentDetail: Enter on an agent opens its detail, built from the
// snapshot: its kernels, the devices its partition gives it, what it holds;
// Esc goes back. Another agent's kernels are not listed.
func TestAgentDetail(t *testing.T) {
	s := fake.Node(fake.Options{})
	a := testApp(t, 120, 60, s, Options{})
	a.Update(keyCode(tea.KeyTab))
	a.Update(keyCode(tea.KeyTab)) // agents
	typeKeys(a, "j")              // the second agent
	ag := s.Agents[1]
	a.Update(keyCode(tea.KeyEnter))
	ds := detailOf(a)
	if ds == nil || ds.Title != "agent "+string(ag.ID) {
		t.Fatalf("Enter on agent %s: top %T %+v", ag.ID, a.top(), ds)
	}
	out := ansi.Strip(a.View().Content)
	mine, others := 0, 0
	for _, k := range s.Kernels() {
		short := kit.ShortKernel(k.ID)
		if k.Agent == ag.ID {
			mine++
			if !strings.Contains(out, short) {
				t.Errorf("agent detail lacks its kernel %s", short)
			}
		} else if !strings.Contains(out, short) {
			others++
		} else {
			t.Errorf("agent detail lists %s of agent %s", short, k.Agent)
		}
	}
	if mine == 0 || others == 0 {
		t.Fatalf("fixture: %d kernels of the agent, %d of others", mine, others)
	}
	owned := 0
	for _, dr := range a.d.Devs {
		if !ag.OwnsDevice(dr.Key) {
			continue
		}
		owned++
		if !strings.Contains(out, "  "+dr.Label+" ") {
			t.Errorf("agent detail lacks owned device %s", dr.Label)
		}
	}
	if owned == 0 || owned == len(a.d.Devs) {
		t.Fatalf("fixture: agent owns %d of %d devices", owned, len(a.d.Devs))
	}
	for _, want := range []string{"Partition", "Held per slot", "Devices it owns", "Kernels"} {
		if !strings.Contains(out, want) {
			t.Errorf("agent detail lacks %q:\n%s", want, out)
		}
	}
	a.Update(keyCode(tea.KeyEscape))
	if a.ModalOpen() {
		t.Error("esc did not close the agent detail")
	}
}

// TestHistoryForgetsGoneDevices: a device a snapshot no longer has leaves
// the history, on a node of a few devices and of many, and the others
// keep their samples.
// TestHistoryObserveAllocatesNothing: each of serve's sessions observes
// every snapshot; on a node of many devices, knowing which are gone made a
// set each time (1.6 % of the server's CPU at 50 viewers of the demo).
func TestHistoryObserveAllocatesNothing(t *testing.T) {
	s := fake.Node(fake.Options{})
	for i := range 40 {
		s.Devices = append(s.Devices, model.Device{Name: "cuda", ID: model.DeviceID("extra-" + strconv.Itoa(i))})
	}
	frac := func(*model.Device) sample { return sample{0.5, 0.25, 0.1} }
	h := history{}
	h.observe(s, frac)
	next := *s
	allocs := testing.AllocsPerRun(20, func() {
		next.Time = next.Time.Add(time.Second)
		snap := next // a snapshot of its own each second, as the engine publishes
		h.observe(&snap, frac)
	})
	// The one allocation is snap, escaping into the history's stamps.
	if allocs > 1 {
		t.Errorf("observing a snapshot of %d devices allocated %.0f times, want at most 1 (the snapshot itself)", len(s.Devices), allocs)
	}
	if n := len(h); n < 40 {
		t.Errorf("the history holds %d devices, want every accelerator of the snapshot", n)
	}
}

func TestHistoryForgetsGoneDevices(t *testing.T) {
	for _, extra := range []int{0, 40} {
		t.Run(strconv.Itoa(extra)+" more devices", func(t *testing.T) {
			s := fake.Node(fake.Options{})
			for i := range extra {
				s.Devices = append(s.Devices, model.Device{Name: "cuda", ID: model.DeviceID("extra-" + strconv.Itoa(i))})
			}
			frac := func(*model.Device) sample { return sample{0.5, 0.25, 0.1} }
			h := history{}
			h.observe(s, frac)
			var keys []model.DeviceKey
			for i := range s.Devices {
				if d := &s.Devices[i]; d.IsAccelerator() {
					keys = append(keys, d.Key())
				}
			}
			if len(h) != len(keys) || len(keys) < 2 {
				t.Fatalf("%d devices in the history, want %d (at least 2)", len(h), len(keys))
			}
			gone := keys[1]
			s2 := *s
			s2.Time = s.Time.Add(time.Second)
			s2.Devices = slices.DeleteFunc(slices.Clone(s.Devices), func(d model.Device) bool { return d.Key() == gone })
			h.observe(&s2, frac)
			if _, ok := h[gone]; ok {
				t.Errorf("%v, gone from the snapshot, is still in the history", gone)
			}
			if len(h) != len(keys)-1 || h[keys[0]] == nil || h[keys[0]].alloc.N != 2 {
				t.Errorf("the history holds %d devices, want the %d left with 2 samples each", len(h), len(keys)-1)
			}
		})
	}
}

// TestFilterBringsTheKernelsForward: / typed over the Issues or Agents tab
// gives the Kernels pane the focus, where the filter's result and its
// hints show (they were out of sight: the tour); over Devices, which
// marks the hits, the focus stays.
func TestFilterBringsTheKernelsForward(t *testing.T) {
	for _, from := range []pane{paneAgents, paneIssues, paneDevices} {
		a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{})
		a.setFocusPane(from)
		typeKeys(a, "/usr:bb31")
		a.Update(keyCode(tea.KeyEnter))
		want := paneKernels
		if from == paneDevices {
			want = paneDevices
		}
		if a.focus != want {
			t.Errorf("/ over %s: focus on %s, want %s", paneSpecs[from].Title, paneSpecs[a.focus].Title, paneSpecs[want].Title)
		}
		if from != paneDevices && !strings.Contains(screen(a), "user:?") {
			t.Errorf("/ over %s: the near-miss hint is not on screen:\n%s", paneSpecs[from].Title, screen(a))
		}
	}
}

// TestFilterEscGivesThePaneBack: esc, which gives the filter from before
// back, also gives back the pane / took the focus from; enter keeps the
// Kernels pane (TestFilterBringsTheKernelsForward).
func TestFilterEscGivesThePaneBack(t *testing.T) {
	for _, from := range []pane{paneAgents, paneIssues, paneDevices, paneKernels} {
		a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{})
		a.setFocusPane(from)
		typeKeys(a, "/usr:bb31")
		a.Update(keyCode(tea.KeyEscape))
		if a.focus != from {
			t.Errorf("/ then esc over %s: focus on %s", paneSpecs[from].Title, paneSpecs[a.focus].Title)
		}
		if a.Kernels.Filter != "" {
			t.Errorf("/ then esc over %s: filter %q kept", paneSpecs[from].Title, a.Kernels.Filter)
		}
	}
}

// TestKernelsAlikeAtEightReadApart: two kernels whose ids share their
// first 8 characters read apart in the kernels table, the id column
// widened for them.
func TestKernelsAlikeAtEightReadApart(t *testing.T) {
	s := fake.Node(fake.Options{})
	ks := s.Kernels()
	twin := *ks[0]
	twin.ID = model.KernelID(string(ks[0].ID)[:8] + "-ffff-4fff-8fff-ffffffffffff")
	s.SetKernels(append(slices.Clone(ks), &twin))
	a := testApp(t, 200, 60, s, Options{})
	a.setFocusPane(paneKernels)
	a.Update(keyRune('f'))
	scr := screen(a)
	for _, want := range []string{string(ks[0].ID)[:10], string(twin.ID)[:10]} {
		if !strings.Contains(scr, want+" ") {
			t.Errorf("kernel %s does not read %q in the table:\n%s", want[:8], want, scr)
		}
	}
}

// TestNoColourProfileGetsMono: a terminal whose colour profile has no
// colour (TERM=dumb over SSH is NoTTY) gets the mono theme, as NO_COLOR
// does, so kernels differ in shape and over-capacity in its ×; in the tour
// a TERM=dumb session drew every bar as plain █, over capacity unmarked.
func TestNoColourProfileGetsMono(t *testing.T) {
	tests := []struct {
		profile  colorprofile.Profile
		explicit bool
		want     string
	}{
		{colorprofile.NoTTY, false, themes.Mono},
		{colorprofile.ASCII, false, themes.Mono},
		{colorprofile.ANSI, false, themes.Dark},
		{colorprofile.TrueColor, false, themes.Dark},
		{colorprofile.NoTTY, true, themes.Colorblind},
	}
	for _, tt := range tests {
		var th *themes.Theme
		if tt.explicit {
			th = themes.MustBuiltin(themes.Colorblind)
		}
		a := testApp(t, 80, 24, nil, Options{Theme: th})
		if !tt.explicit {
			a.opts.Theme = nil
			a.theme = themeChoice{dark: true}
			_ = a.setTheme(themes.Auto(true))
		}
		a.Update(tea.ColorProfileMsg{Profile: tt.profile})
		if a.St.Theme.Name != tt.want {
			t.Errorf("profile %v (explicit %v): theme %s, want %s", tt.profile, tt.explicit, a.St.Theme.Name, tt.want)
		}
	}
}
