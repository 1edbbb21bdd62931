package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// pastSource is a fleet source's past: each read is logged with whether
// its ctx was already cancelled, and answers one node named after the
// moment asked ("then-1402"), so the screen shows which moment it holds.
type pastSource struct {
	mu        sync.Mutex
	asked     []time.Time
	cancelled []bool
	fail      time.Time
	// same, when set, is the fleet answered at every moment (its nodes
	// and states), rather than one node named after the moment.
	same *fleet.Fleet
}

func (p *pastSource) at(ctx context.Context, at time.Time) (*fleet.Fleet, error) {
	p.mu.Lock()
	p.asked = append(p.asked, at)
	p.cancelled = append(p.cancelled, ctx.Err() != nil)
	p.mu.Unlock()
	if at.Equal(p.fail) {
		return nil, errors.New("prometheus: 503 Service Unavailable")
	}
	if p.same != nil {
		f := *p.same
		f.Time = at
		return &f, nil
	}
	s := fake.Node(fake.Options{})
	name := "then-" + at.Format("1504")
	s.Node, s.Time = name, at
	return &fleet.Fleet{Time: at, Nodes: []fleet.Node{{Addr: name + ":2222", Name: name, Source: "ssh", State: fleet.Live,
		LastSeen: at, Updated: at, Snap: s, Sum: fleet.Summarize(s, fleet.Settings{})}}}, nil
}

// runPast runs a Cmd as the program would and hands its message back.
func runPast(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if _, ok := msg.(pastMsg); !ok {
		return
	}
	_, next := m.Update(msg)
	if next != nil {
		if fm, ok := next().(fitMsg); ok {
			m.Update(fm)
		}
	}
}

// typeKeys presses each key and returns the last Cmd.
func typeKeys(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		msg := tea.KeyPressMsg{Code: rune(k[0]), Text: k}
		if k == "enter" {
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		}
		_, cmd = m.Update(msg)
	}
	return cmd
}

func command(m *Model, line string) tea.Cmd {
	keys := []string{":"}
	for _, r := range line {
		keys = append(keys, string(r))
	}
	return typeKeys(m, append(keys, "enter")...)
}

// TestFleetAt: :at TIME shows the fleet as the source said it was then,
// with PAST in the header; live states that come meanwhile are kept, not
// shown; [ and ] step by Options.Step, a newer read replacing the one in
// flight; :live and ] past the present come back to the live fleet.
func TestFleetAt(t *testing.T) {
	src := &pastSource{}
	m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts", At: src.at, Step: time.Minute})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m.Update(fleetMsg{fleetOf(t)})
	screen := func() string { return stripANSI(fleetScreen(m)) }
	clock := func(at time.Time) string { return pastClock(at, fake.T0) }

	y, mo, d := fake.T0.Date()
	then := time.Date(y, mo, d-1, 14, 2, 0, 0, fake.T0.Location())
	cmd := command(m, "at yesterday 14:02")
	if cmd == nil {
		t.Fatalf(":at read nothing:\n%s", screen())
	}
	if s := screen(); !strings.Contains(s, "PAST "+clock(then)+" reading") {
		t.Fatalf("no PAST marker while reading:\n%s", s)
	}
	runPast(m, cmd)
	if len(src.asked) != 1 || !src.asked[0].Equal(then) {
		t.Fatalf(":at yesterday 14:02 asked %v, want %v", src.asked, then)
	}
	s := screen()
	if !strings.Contains(s, "then-1402") || strings.Contains(s, "gpu-node01") || !strings.Contains(s, "PAST "+clock(then)) || strings.Contains(s, "reading") {
		t.Fatalf("the fleet at %v:\n%s", then, s)
	}
	// A live state coming now is kept for :live, not shown.
	m.Update(fleetMsg{fleetOf(t)})
	if s := screen(); strings.Contains(s, "gpu-node01") || !strings.Contains(s, "then-1402") {
		t.Fatalf("a live state replaced the past:\n%s", s)
	}

	// [ steps a minute back.
	runPast(m, typeKeys(m, "["))
	if s := screen(); !strings.Contains(s, "then-1401") || !strings.Contains(s, "PAST "+clock(then.Add(-time.Minute))) {
		t.Fatalf("[ did not step back a minute:\n%s", s)
	}
	// Two steps before the first answers: the first read is cancelled and
	// its late answer dropped; the second's is shown.
	first := typeKeys(m, "[")
	second := typeKeys(m, "[")
	runPast(m, first)
	if s := screen(); strings.Contains(s, "then-1400") {
		t.Fatalf("a replaced read's answer was shown:\n%s", s)
	}
	runPast(m, second)
	if s := screen(); !strings.Contains(s, "then-1359") || !strings.Contains(s, "PAST "+clock(then.Add(-3*time.Minute))) {
		t.Fatalf("the newest step's answer is not shown:\n%s", s)
	}
	if n := len(src.cancelled); !src.cancelled[n-2] || src.cancelled[n-1] {
		t.Fatalf("the replaced read was not cancelled, or the newest was: %v", src.cancelled)
	}
	// ] steps forward.
	runPast(m, typeKeys(m, "]"))
	if s := screen(); !strings.Contains(s, "then-1400") {
		t.Fatalf("] did not step forward:\n%s", s)
	}

	// :live comes back to the newest live state.
	if cmd := command(m, "live"); cmd != nil {
		t.Fatal(":live read something")
	}
	if s := screen(); !strings.Contains(s, "gpu-node01") || strings.Contains(s, "then-") || strings.Contains(s, "PAST") {
		t.Fatalf(":live did not come back:\n%s", s)
	}
	if on, _ := m.InPast(); on {
		t.Fatal("still in the past after :live")
	}

	// From live, [ goes a step back and ] past the present comes live.
	typeKeys(m, "]")
	if len(src.asked) != 5 {
		t.Fatalf("] while live read the source: %v", src.asked)
	}
	runPast(m, typeKeys(m, "["))
	if want := fake.T0.Add(-time.Minute); !src.asked[len(src.asked)-1].Equal(want) || !strings.Contains(screen(), "then-0959") {
		t.Fatalf("[ from live asked %v, want %v:\n%s", src.asked[len(src.asked)-1], want, screen())
	}
	if cmd := typeKeys(m, "]"); cmd != nil || strings.Contains(screen(), "PAST") || !strings.Contains(screen(), "gpu-node01") {
		t.Fatalf("] to the present did not come live:\n%s", screen())
	}
}

// TestFleetAtRefused: a time :at cannot take, a future one, a source that
// cannot read the past and a read that fails each say why, and the
// console stays on (or comes back to) the live fleet.
func TestFleetAtRefused(t *testing.T) {
	y, mo, d := fake.T0.Date()
	failAt := time.Date(y, mo, d, 9, 0, 0, 0, fake.T0.Location())
	cases := []struct {
		name, line, want string
		noAt             bool
	}{
		// The forms it takes, cut beside the keys even at 160 columns,
		// give way to two and where the rest are.
		{"typo", "at 25:99", `:at "25:99": not a time (e.g. 14:02 or -2h; more in ?)`, false},
		{"future", "at " + fake.T0.Add(time.Hour).Format(time.RFC3339), "in the future", false},
		{"no time", "at", ":at TIME", false},
		{"no past", "at -1h", "cannot read the past", true},
		{"fails", "at 09:00", "503 Service Unavailable", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := &pastSource{fail: failAt}
			o := Options{ASCII: true, Now: func() time.Time { return fake.T0 }, At: src.at}
			if c.noAt {
				o.At = nil
			}
			m := New(nil, o)
			m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
			m.Update(fleetMsg{fleetOf(t)})
			runPast(m, command(m, c.line))
			s := stripANSI(fleetScreen(m))
			if !strings.Contains(s, c.want) || !strings.Contains(s, "gpu-node01") || strings.Contains(s, "PAST") {
				t.Fatalf(":%s: want %q on the live fleet:\n%s", c.line, c.want, s)
			}
		})
	}
}

// TestFleetHelpListsPast: the help, built from the bindings, lists [ and ]
// and the ':' line names :at and :live.
func TestFleetHelpListsPast(t *testing.T) {
	m := newTestFleet(t, 160, 40)
	typeKeys(m, "?")
	s := stripANSI(fleetScreen(m))
	for _, want := range []string{"past: a step earlier", "past: a step later", ":at :live"} {
		if !strings.Contains(s, want) {
			t.Errorf("help lacks %q:\n%s", want, s)
		}
	}
}

// headerOf is the first line of the fleet console's screen.
func headerOf(m *Model) string {
	return strings.SplitN(stripANSI(fleetScreen(m)), "\n", 2)[0]
}

// TestFleetAtHeaderKeepsCounts: at 80 columns the PAST marker with a date
// (yesterday's moment, the widest) leaves the live/stale/unreachable
// counts whole, while reading and once read; the live clock and the
// source give way first, and come back where there is room. The totals
// are the moment's: "then:", never "live:".
func TestFleetAtHeaderKeepsCounts(t *testing.T) {
	y, mo, d := fake.T0.Date()
	then := time.Date(y, mo, d-1, 14, 2, 0, 0, fake.T0.Location())
	clock := pastClock(then, fake.T0)
	counts := "1 live, 1 stale, 1 unreachable"
	cases := []struct {
		w, h int
		// want are in the header once read; gone are not.
		want, gone []string
	}{
		{80, 24, []string{"fgtop fleet", "PAST " + clock, counts}, []string{"live is"}},
		{110, 24, []string{"PAST " + clock, counts, "then: 5 GPUs, held 3.30/4.00"}, []string{"live is", "live:"}},
		{160, 30, []string{"PAST " + clock, "live is " + fake.T0.Local().Format("15:04:05"), "ssh: 3 hosts", counts, "then: 5 GPUs, held 3.30/4.00"}, []string{"live:"}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%d", c.w, c.h), func(t *testing.T) {
			src := &pastSource{same: fleetOf(t)}
			m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts", At: src.at})
			m.Update(tea.WindowSizeMsg{Width: c.w, Height: c.h})
			m.Update(fleetMsg{fleetOf(t)})
			cmd := command(m, "at yesterday 14:02")
			if h := headerOf(m); !strings.Contains(h, "PAST "+clock) || !strings.Contains(h, counts) || !strings.Contains(h, "...") {
				t.Fatalf("reading: the header lost the marker or the counts:\n%s", h)
			}
			runPast(m, cmd)
			h := headerOf(m)
			for _, w := range c.want {
				if !strings.Contains(h, w) {
					t.Errorf("the header lacks %q:\n%s", w, h)
				}
			}
			for _, g := range c.gone {
				if strings.Contains(h, g) {
					t.Errorf("the header has %q, which should give way:\n%s", g, h)
				}
			}
			if strings.HasSuffix(strings.TrimRight(h, " "), "~") {
				t.Errorf("the header is cut:\n%s", h)
			}
		})
	}
}

// TestFleetAtOpenedNodeSaysPast: a node opened while the fleet shows the
// past says PAST and the moment in its own header, at 80x24 and wider;
// :live there says where to go live; back in the fleet and live again, a
// node opened says no PAST.
func TestFleetAtOpenedNodeSaysPast(t *testing.T) {
	y, mo, d := fake.T0.Date()
	then := time.Date(y, mo, d-1, 14, 2, 0, 0, fake.T0.Location())
	clock := pastClock(then, fake.T0)
	for _, size := range [][2]int{{80, 24}, {120, 30}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			src := &pastSource{}
			m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts", At: src.at})
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m.Update(fleetMsg{fleetOf(t)})
			screen := func() string { return stripANSI(fleetScreen(m)) }
			open := func() {
				t.Helper()
				typeKeys(m, "enter")
				if m.drill == nil {
					t.Fatalf("no node opened:\n%s", screen())
				}
				m.Update(console.SnapshotMsg{Snap: m.drillLast})
			}

			typeKeys(m, "j") // gpu-node01, live
			open()
			if s := screen(); strings.Contains(s, "PAST") || !strings.Contains(s, "gpu-node01") {
				t.Fatalf("a live node says PAST:\n%s", s)
			}
			typeKeys(m, "q")

			runPast(m, command(m, "at yesterday 14:02"))
			open()
			s := screen()
			if !strings.Contains(s, "PAST "+clock) || !strings.Contains(s, "then-1402") || !strings.Contains(s, "back to the fleet") {
				t.Fatalf("the node opened in the past does not say PAST %s:\n%s", clock, s)
			}
			command(m, "live")
			if s := screen(); !strings.Contains(s, "q back to the fleet, then :live") || !strings.Contains(s, "PAST "+clock) {
				t.Fatalf(":live in the opened past node:\n%s", s)
			}
			typeKeys(m, "q")
			if on, _ := m.InPast(); !on || !strings.Contains(screen(), "then-1402") {
				t.Fatalf("back from the node, the fleet left the past:\n%s", screen())
			}

			command(m, "live")
			typeKeys(m, "j")
			open()
			if s := screen(); strings.Contains(s, "PAST") {
				t.Fatalf("a node opened after :live says PAST:\n%s", s)
			}
		})
	}
}

// TestFleetAtLandsOnAnOpenedNode: a past read that lands while a node is
// open shows that node at the moment, PAST in its header; a node the
// past fleet lacks keeps its live snapshot and says no PAST.
func TestFleetAtLandsOnAnOpenedNode(t *testing.T) {
	for _, c := range []struct {
		name string
		same bool
	}{{"in the past fleet", true}, {"not in the past fleet", false}} {
		t.Run(c.name, func(t *testing.T) {
			src := &pastSource{}
			if c.same {
				src.same = fleetOf(t)
			}
			m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }, At: src.at})
			m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			m.Update(fleetMsg{fleetOf(t)})
			cmd := command(m, "at -2h")
			typeKeys(m, "j", "enter")
			if m.drill == nil {
				t.Fatal("no node opened")
			}
			live := m.drillLast
			runPast(m, cmd)
			m.Update(console.SnapshotMsg{Snap: m.drillLast})
			s := stripANSI(fleetScreen(m))
			if got := strings.Contains(s, "PAST "+pastClock(fake.T0.Add(-2*time.Hour), fake.T0)); got != c.same || (m.drillLast != live) != c.same {
				t.Fatalf("PAST shown %v, snapshot replaced %v; want both %v:\n%s", got, m.drillLast != live, c.same, s)
			}
		})
	}
}

// TestFleetCommandClearsLastError: a command's answer is its own: after
// :at refused a time, an :at that works leaves no trace of the refusal
// on the bottom line (the clock stands still here, so it never expires).
func TestFleetCommandClearsLastError(t *testing.T) {
	src := &pastSource{}
	m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }, At: src.at})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	m.Update(fleetMsg{fleetOf(t)})
	footer := func() string {
		l := strings.Split(stripANSI(fleetScreen(m)), "\n")
		return l[len(l)-1]
	}
	runPast(m, command(m, "at yesterdy 14:02"))
	if f := footer(); !strings.Contains(f, ":at ") || !strings.Contains(f, "yesterdy") {
		t.Fatalf("no refusal of :at yesterdy 14:02 on the bottom line: %q", f)
	}
	runPast(m, command(m, "at -3h"))
	if f := footer(); strings.Contains(f, "yesterdy") || !strings.Contains(stripANSI(fleetScreen(m)), "PAST") {
		t.Fatalf(":at -3h worked, and the bottom line still says the last one's error: %q", f)
	}
}

// TestFleetHelpListsEveryCommand: every ':' command the console handles
// (it does not answer "unknown command") is in help's Commands section,
// :at and :live among them, not only on the ':' key's line.
func TestFleetHelpListsEveryCommand(t *testing.T) {
	m := newTestFleet(t, 160, 80)
	typeKeys(m, "?")
	s := stripANSI(fleetScreen(m))
	_, section, ok := strings.Cut(s, "\n Commands ")
	if !ok {
		t.Fatalf("no Commands section in help:\n%s", s)
	}
	// Each command clears the last one's message: one console asks all.
	c := newTestFleet(t, 160, 30)
	for _, name := range []string{"fit", "at", "live", "sort", "filter", "q", "nosuch"} {
		command(c, name)
		handled := !strings.Contains(stripANSI(fleetScreen(c)), "unknown command :"+name)
		listed := false
		for _, l := range strings.Split(section, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == ":"+name {
				listed = true
			}
		}
		if handled != listed {
			t.Errorf(":%s handled %v, listed in help's Commands %v:\n%s", name, handled, listed, section)
		}
	}
}

// TestFleetAtKeepsLiveNames: over SSH a node with no data at the moment
// (its record lacks it) has no snapshot then to say its name: the past
// table listed it by address alone, and filtering by the name the live
// fleet shows (/gpu-node02) said no node matches. It keeps the live name.
func TestFleetAtKeepsLiveNames(t *testing.T) {
	y, mo, d := fake.T0.Date()
	then := time.Date(y, mo, d-1, 14, 2, 0, 0, fake.T0.Location())
	src := &pastSource{same: &fleet.Fleet{Nodes: []fleet.Node{{Addr: "10.0.0.2:2222", Name: "10.0.0.2:2222", Source: "ssh",
		State: fleet.Unreachable, Reason: fleet.NoDataAt(then) + ": the node's record lacks it"}}}}
	m := New(nil, Options{ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts", At: src.at})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(fleetMsg{fleetOf(t)})
	runPast(m, command(m, "at yesterday 14:02"))
	typeKeys(m, append(append([]string{"/"}, strings.Split("gpu-node02", "")...), "enter")...)
	s := stripANSI(fleetScreen(m))
	if strings.Contains(s, "no node matches") || !strings.Contains(s, "gpu-node02") || !strings.Contains(s, "no data at") {
		t.Fatalf("the node with no data then, filtered by its live name:\n%s", s)
	}
	if src.same.Nodes[0].Name != "10.0.0.2:2222" {
		t.Errorf("the source's answer was changed: %+v", src.same.Nodes[0])
	}
}

// TestFleetAtFootersAt80: :at with no time, or one it cannot read, listed
// the forms, cut at 80 columns after the first ("want RFC 3339
// (2026-11-27T14:02:00Z), a…"): the short form gives two and where the
// rest are, as the node's console does.
func TestFleetAtFootersAt80(t *testing.T) {
	for _, c := range []struct{ typed, want string }{
		{"at", "usage: :at TIME (e.g. 14:02 or -2h; more in ?)"},
		{"at yesterdy", `:at "yesterdy": not a time (e.g. 14:02 or -2h; more in ?)`},
	} {
		m := New(nil, Options{Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts", At: (&pastSource{}).at, Step: time.Minute})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m.Update(fleetMsg{fleetOf(t)})
		command(m, c.typed)
		lines := strings.Split(stripANSI(fleetScreen(m)), "\n")
		if got := lines[len(lines)-1]; !strings.Contains(got, c.want) || strings.Contains(got, "…") {
			t.Errorf(":%s: footer %q, want %q whole", c.typed, got, c.want)
		}
	}
}
