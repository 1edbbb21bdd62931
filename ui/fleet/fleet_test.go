package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/console"
	"github.com/fgtop/fgtop/ui/kit"
)

// fleetOf builds a fleet of three nodes around the fake node: one live,
// one stale (last figures kept), one unreachable that never answered.
func fleetOf(t *testing.T) *fleet.Fleet {
	t.Helper()
	now := fake.T0
	tr := fleet.NewTracker([]string{"10.0.0.1:2222", "10.0.0.2:2222", "10.0.0.3:2222"}, "ssh",
		fleet.Options{StaleAfter: 5 * time.Second, UnreachableAfter: time.Minute, Now: func() time.Time { return now }})
	ctx := t.Context()
	go func() { _ = tr.Run(ctx) }()
	a := fake.Node(fake.Options{})
	b := *fake.Node(fake.Options{Source: "mock"})
	b.Node = "gpu-node02"
	tr.Send(ctx, fleet.Event{Addr: "10.0.0.1:2222", Snap: a, Sum: fleet.Summarize(a, fleet.Settings{}), At: now})
	tr.Send(ctx, fleet.Event{Addr: "10.0.0.2:2222", Snap: &b, Sum: fleet.Summarize(&b, fleet.Settings{}), At: now.Add(-10 * time.Second)})
	tr.Send(ctx, fleet.Event{Addr: "10.0.0.3:2222", Err: errors.New("dial: connection refused"), At: now})
	waitTracker(t, tr, func(f *fleet.Fleet) bool {
		return f.Node("10.0.0.3:2222").State == fleet.Unreachable && f.Node("10.0.0.2:2222").State == fleet.Stale
	})
	return tr.Latest()
}

func newTestFleet(t *testing.T, w, h int) *Model {
	t.Helper()
	th, err := themes.Load("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(nil, Options{Theme: th, ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 3 hosts"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(fleetMsg{fleetOf(t)})
	return m
}

func fleetScreen(m *Model) string { return m.View().Content }

func fleetPress(m *Model, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		default:
			msg = tea.KeyPressMsg{Code: rune(k[0]), Text: k}
		}
		_, cmd := m.Update(msg)
		// Run a :fit synchronously, as the program would.
		if cmd != nil {
			if fm, ok := cmd().(fitMsg); ok {
				m.Update(fm)
			}
		}
	}
}

func TestFleetConsole(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		m := newTestFleet(t, size[0], size[1])
		out := fleetScreen(m)
		lines := strings.Split(out, "\n")
		if len(lines) != size[1] {
			t.Fatalf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := kit.Width(stripANSI(l)); w > size[0] {
				t.Fatalf("%dx%d: line %d is %d cells: %q", size[0], size[1], i, w, l)
			}
		}
		for _, want := range []string{"gpu-node01", "gpu-node02", "10.0.0.3:2222", "STALE", "UNREACHABLE", "1 live", "1 stale", "1 unreachable"} {
			if !strings.Contains(stripANSI(out), want) {
				t.Errorf("%dx%d: no %q in\n%s", size[0], size[1], want, stripANSI(out))
			}
		}
	}
	m := newTestFleet(t, 120, 40)
	// The unreachable node's reason shows when it is selected.
	fleetPress(m, "g")
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, "dial: connection refused") {
		t.Fatalf("no reason for the unreachable node:\n%s", s)
	}
	// Filter, inverted.
	fleetPress(m, "/", "!", "n", "o", "d", "e", "enter")
	if s := stripANSI(fleetScreen(m)); strings.Contains(s, "gpu-node01") || !strings.Contains(s, "10.0.0.3:2222") {
		t.Fatalf("filter !node:\n%s", s)
	}
	fleetPress(m, "esc")
	// :fit on every node.
	fleetPress(m, ":")
	for _, r := range "fit cuda.shares=0.5" {
		fleetPress(m, string(r))
	}
	fleetPress(m, "enter")
	// The fake node's agents share GPU2 (0.80/1.00 held by both): the
	// first agent's allocator, which sees only its own kernels there,
	// puts 0.5 on it, which overcommits it.
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, "cuda.shares=0.5 fits on 1/3 (1 only by overcommitting)") || !strings.Contains(s, "OVERCOMMIT GPU2") {
		t.Fatalf(":fit:\n%s", s)
	}
	// Enter opens the node's own console, read-only; q comes back.
	fleetPress(m, "g", "enter")
	if !strings.Contains(stripANSI(fleetScreen(m)), "no snapshot yet") || m.drill != nil {
		t.Fatal("enter on a node without a snapshot: no word of why")
	}
	fleetPress(m, "j", "enter")
	if m.drill == nil {
		t.Fatal("enter opened nothing")
	}
	m.Update(console.SnapshotMsg{Snap: m.drillLast})
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, "read-only") || !strings.Contains(s, "Devices") {
		t.Fatalf("the node's console:\n%s", s)
	}
	if len(m.drill.Keys.Mutating()) != 0 {
		t.Fatal("the opened node's console has mutating keys")
	}
	// Its footer says what q does there: back, not quit.
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, "q back to the fleet") || strings.Contains(s, "q quit") {
		t.Fatalf("the node's footer does not say q goes back:\n%s", s)
	}
	fleetPress(m, "q")
	if m.drill != nil || !strings.Contains(stripANSI(fleetScreen(m)), "Nodes by") {
		t.Fatal("q did not come back to the fleet")
	}
	fleetPress(m, "?")
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, ":fit SLOTS") || !strings.Contains(s, "open node") {
		t.Fatalf("help:\n%s", s)
	}
}

// TestFleetFitUnknownWhenNotLive: :fit counts only live nodes as fits. The
// stale node (its last figures would take the request) and the
// unreachable one are "unknown", in the count, their FIT cells and the
// detail pane; the header's held/capacity is the live nodes' alone, and
// says so.
func TestFleetFitUnknownWhenNotLive(t *testing.T) {
	m := newTestFleet(t, 120, 40)
	live := fleet.Summarize(fake.Node(fake.Options{}), fleet.Settings{})
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, fmt.Sprintf("live: %d GPUs, held %s/%s", live.GPUs, live.Held, live.Capacity)) {
		t.Fatalf("the header's figures are not the live node's alone (%d GPUs, %s/%s):\n%s", live.GPUs, live.Held, live.Capacity, s)
	}
	fleetPress(m, ":")
	for _, r := range "fit cuda.shares=0.5" {
		fleetPress(m, string(r))
	}
	fleetPress(m, "enter")
	s := stripANSI(fleetScreen(m))
	for _, want := range []string{"cuda.shares=0.5 fits on 1/3", "2 unknown", "OVERCOMMIT GPU"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	rows := 0
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, ">"))
		if len(f) > 2 && (f[0] == "gpu-node02" || f[0] == "10.0.0.3:2222") {
			rows++
			if f[len(f)-1] != "unknown" {
				t.Errorf("the FIT cell of %s, not live: %q", f[0], l)
			}
		}
	}
	if rows != 2 {
		t.Errorf("%d table rows of the nodes that are not live:\n%s", rows, s)
	}
	// The stale node's detail: unknown, with what its last figures say.
	found := false
	fleetPress(m, "g")
	for range 3 {
		if strings.Contains(stripANSI(fleetScreen(m)), "cuda.shares=0.5: unknown, the node is stale; its last figures would take it: ") {
			found = true
		}
		fleetPress(m, "j")
	}
	if !found {
		t.Errorf("no node's detail says the stale node's fit is unknown:\n%s", stripANSI(fleetScreen(m)))
	}
}

// TestFleetFitTypo: :fit with a slot no node registers is refused in
// fgtop's words, naming the fleet's slots, and runs nothing.
func TestFleetFitTypo(t *testing.T) {
	m := newTestFleet(t, 120, 40)
	fleetPress(m, ":")
	for _, r := range "fit cuda.shres=0.5" {
		fleetPress(m, string(r))
	}
	fleetPress(m, "enter")
	s := stripANSI(fleetScreen(m))
	if !strings.Contains(s, `unknown slot "cuda.shres": did you mean cuda.shares?`) || m.fitReq != nil {
		t.Errorf(":fit cuda.shres=0.5 (fit request %v):\n%s", m.fitReq, s)
	}
	// The next :fit answers it: the refusal does not stay beside its
	// answer for the rest of its time.
	fleetPress(m, ":")
	for _, r := range "fit cuda.shares=0.5" {
		fleetPress(m, string(r))
	}
	fleetPress(m, "enter")
	if s := stripANSI(fleetScreen(m)); strings.Contains(s, "unknown slot") || m.fitReq == nil {
		t.Errorf(":fit cuda.shares=0.5 after the typo (fit request %v):\n%s", m.fitReq, s)
	}
}

// TestUnreachableReasonWraps: at 80 columns the reason a node is
// unreachable wraps under the table, so its end, what to do, shows (one
// line cut "add the public key to ..." before it).
func TestUnreachableReasonWraps(t *testing.T) {
	now := fake.T0
	tr := fleet.NewTracker([]string{"10.0.0.1:2222", "10.0.0.9:2222", "10.0.0.7:2222"}, "ssh",
		fleet.Options{StaleAfter: 5 * time.Second, UnreachableAfter: time.Minute, Now: func() time.Time { return now }})
	ctx := t.Context()
	go func() { _ = tr.Run(ctx) }()
	a := fake.Node(fake.Options{})
	tr.Send(ctx, fleet.Event{Addr: "10.0.0.1:2222", Snap: a, Sum: fleet.Summarize(a, fleet.Settings{}), At: now})
	const why = "the node refused the key (offered: /home/op/.ssh/id_ed25519): add the public key to the node's fgtop authorized_keys (fgtop serve --authorized-keys), or log in with another key (--identity FILE)"
	tr.Send(ctx, fleet.Event{Addr: "10.0.0.9:2222", Err: errors.New(why), At: now})
	// 10.0.0.7 was live, then refused the key: its last figures are kept,
	// and they give way before the reason's last words do.
	// (Another node: two addresses giving one name are marked.)
	b := *a
	b.Node = "gpu-node07"
	tr.Send(ctx, fleet.Event{Addr: "10.0.0.7:2222", Snap: &b, Sum: fleet.Summarize(&b, fleet.Settings{}), At: now})
	tr.Send(ctx, fleet.Event{Addr: "10.0.0.7:2222", Err: errors.New(why), At: now})
	// Both events of 10.0.0.7 taken: its snapshot kept, its reason said
	// (not just "not live": before its first event it is connecting).
	waitTracker(t, tr, func(f *fleet.Fleet) bool {
		n7 := f.Node("10.0.0.7:2222")
		return f.Node("10.0.0.9:2222").State == fleet.Unreachable && n7.State != fleet.Live && n7.Snap != nil && n7.Reason != ""
	})
	for _, ascii := range []bool{false, true} {
		m := New(nil, Options{Theme: themes.MustBuiltin(themes.Dark), ASCII: ascii, Now: func() time.Time { return now }, Source: "ssh: 2 hosts"})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m.Update(fleetMsg{tr.Latest()})
		for _, addr := range []string{"10.0.0.9:2222", "10.0.0.7:2222"} {
			for i := range m.Rows {
				if m.fl.Nodes[m.Rows[i]].Addr == addr {
					m.Cursor = i
				}
			}
			frame := stripANSI(m.View().Content)
			flat := strings.Join(strings.Fields(frame), " ")
			for _, want := range []string{"the node refused the key", "fgtop serve --authorized-keys", "(--identity FILE)"} {
				if !strings.Contains(flat, want) {
					t.Errorf("%s ascii=%v: %q not on the screen:\n%s", addr, ascii, want, frame)
				}
			}
			if n := len(strings.Split(strings.TrimRight(frame, "\n"), "\n")); n != 24 {
				t.Errorf("%s ascii=%v: %d rows, want 24", addr, ascii, n)
			}
		}
	}
}

// TestFleetHeaderKeepsSlotsApart: a fleet of a fractional node and a node
// of whole GPUs totals each slot on its own: shares and devices were
// added into one held/capacity.
func TestFleetHeaderKeepsSlotsApart(t *testing.T) {
	th, err := themes.Load("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(nil, Options{Theme: th, ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "ssh: 2 hosts"})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	a := fake.Node(fake.Options{})
	b := *fake.Node(fake.Options{})
	b.Node = "whole"
	b.Devices = slices.Clone(b.Devices)
	for i := range b.Devices {
		if b.Devices[i].Slot == model.SlotCUDAShares {
			b.Devices[i].Slot, b.Devices[i].Capacity = model.SlotCUDADevice, model.One
		}
	}
	b.SetKernels(nil)
	sa, sb := fleet.Summarize(a, fleet.Settings{}), fleet.Summarize(&b, fleet.Settings{})
	if sa.Slot != model.SlotCUDAShares || sb.Slot != model.SlotCUDADevice {
		t.Fatalf("slots %s and %s", sa.Slot, sb.Slot)
	}
	m.Update(fleetMsg{&fleet.Fleet{Time: fake.T0, Nodes: []fleet.Node{
		{Addr: "a:1", Name: "a", State: fleet.Live, LastSeen: fake.T0, Snap: a, Sum: sa},
		{Addr: "b:1", Name: "whole", State: fleet.Live, LastSeen: fake.T0, Snap: &b, Sum: sb},
	}}})
	want := fmt.Sprintf("live: %d GPUs, held %s/%s cuda.shares, %s/%s cuda.device", sa.GPUs+sb.GPUs, sa.Held, sa.Capacity, sb.Held, sb.Capacity)
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, want) {
		t.Fatalf("header lacks %q:\n%s", want, s)
	}
}

// TestFleetHelpScrollsAt80x24: the help is taller than 24 rows; what
// does not fit scrolls (its last command, :q, was cut off for good).
func TestFleetHelpScrollsAt80x24(t *testing.T) {
	m := newTestFleet(t, 80, 24)
	fleetPress(m, "?")
	s := stripANSI(fleetScreen(m))
	if strings.Contains(s, ":q ") || !strings.Contains(s, "j/k pgup/pgdn scroll  1-21/") {
		t.Fatalf("help at 80x24, top:\n%s", s)
	}
	if n := len(strings.Split(strings.TrimRight(s, "\n"), "\n")); n != 24 {
		t.Fatalf("%d rows, want 24", n)
	}
	fleetPress(m, "G")
	s = stripANSI(fleetScreen(m))
	if !strings.Contains(s, ":q ") || !strings.Contains(s, ":filter TEXT") {
		t.Fatalf("help at 80x24, bottom:\n%s", s)
	}
	fleetPress(m, "g")
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, " 1-21/") {
		t.Fatalf("help after g:\n%s", s)
	}
	fleetPress(m, "esc")
	if s := stripANSI(fleetScreen(m)); !strings.Contains(s, "Nodes by") {
		t.Fatalf("esc did not leave the help:\n%s", s)
	}
}

// TestFleetSourceFailing: a fleet whose source fails (Prometheus
// unreachable) and names no node says so in its header and in place of
// the rows, never "no node matches the filter" with no filter set; with a
// filter that matches nothing, that is what it says.
func TestFleetSourceFailing(t *testing.T) {
	th, err := themes.Load("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(nil, Options{Theme: th, ASCII: true, Now: func() time.Time { return fake.T0 }, Source: "prometheus http://127.0.0.1:19099"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 20})
	m.Update(fleetMsg{&fleet.Fleet{Seq: 1, Time: fake.T0, Err: "prometheus: dial tcp 127.0.0.1:19099: connection refused"}})
	scr := fleetScreen(m)
	if !strings.Contains(scr, "SOURCE FAILING") || !strings.Contains(scr, "no nodes: prometheus: dial tcp 127.0.0.1:19099: connection refused") ||
		strings.Contains(scr, "matches the filter") {
		t.Errorf("screen:\n%s", scr)
	}
	m = newTestFleet(t, 100, 20)
	m.Update(fleetMsg{fleetOf(t)})
	if scr := fleetScreen(m); strings.Contains(scr, "SOURCE FAILING") {
		t.Errorf("a working source said failing:\n%s", scr)
	}
	m.Filter = "nothing-like-this"
	m.resort()
	if scr := stripANSI(fleetScreen(m)); !strings.Contains(scr, "no node matches the filter nothing-like-this") {
		t.Errorf("filtered screen:\n%s", scr)
	}
}

// TestFleetLargestUnknownWhenNotLive: what fits on a node that is not
// live is not known now, as :fit says of it: the stale node's FITS<= is
// "-" (its last figure is no answer), and its detail says unknown, with
// the last figure labelled as what it was.
func TestFleetLargestUnknownWhenNotLive(t *testing.T) {
	m := newTestFleet(t, 120, 40)
	sum := fleet.Summarize(fake.Node(fake.Options{}), fleet.Settings{})
	last := sum.Largest
	// The live node's figure carries the overcommit mark where it has one.
	liveCell := last.String()
	if sum.LargestOvercommits {
		liveCell += "!"
	}
	s := stripANSI(fleetScreen(m))
	col := -1
	cells := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, ">"))
		if i := slices.Index(f, "FITS<="); i >= 0 {
			col = i
		}
		if col >= 0 && len(f) > col && (f[0] == "gpu-node01" || f[0] == "gpu-node02") {
			cells[f[0]] = f[col]
		}
	}
	if cells["gpu-node01"] != liveCell || cells["gpu-node02"] != "-" {
		t.Fatalf("FITS<= cells %v, want the live node's %s and - for the stale one:\n%s", cells, liveCell, s)
	}
	fleetPress(m, "G")
	s = stripANSI(fleetScreen(m))
	want := fmt.Sprintf("the largest cuda.shares request that fits: unknown, the node is stale (it was %s;", last)
	if !strings.Contains(s, "gpu-node02 10.0.0.2:2222") || !strings.Contains(s, want) || strings.Contains(s, "that fits: "+last.String()) {
		t.Errorf("the stale node's detail does not say its largest fit is unknown (%q):\n%s", want, s)
	}
}

// TestFleetFilterMatchesNothingListsNodes: a filter that matches no node
// names the nodes there are (the project's rule for a name that matches
// nothing), with the likely misspelt one; an inverted filter gets no
// did-you-mean.
func TestFleetFilterMatchesNothingListsNodes(t *testing.T) {
	for _, c := range []struct{ filter, want, not string }{
		{"gpu-nod02", "no node matches the filter gpu-nod02 (did you mean gpu-node02?); the nodes: 10.0.0.3:2222 gpu-node01 gpu-node02", ""},
		{"zzz", "no node matches the filter zzz; the nodes: 10.0.0.3:2222 gpu-node01 gpu-node02", "did you mean"},
		{"!2222", "no node matches the filter !2222; the nodes: 10.0.0.3:2222 gpu-node01 gpu-node02", "did you mean"},
	} {
		t.Run(c.filter, func(t *testing.T) {
			m := newTestFleet(t, 160, 30)
			keys := []string{"/"}
			for _, r := range c.filter {
				keys = append(keys, string(r))
			}
			fleetPress(m, append(keys, "enter")...)
			s := stripANSI(fleetScreen(m))
			if !strings.Contains(s, c.want) || (c.not != "" && strings.Contains(s, c.not)) {
				t.Errorf("/%s: want %q:\n%s", c.filter, c.want, s)
			}
		})
	}
}
