package console

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	record "github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// runCmd runs a command as the program would and hands its messages to a.
func runCmd(a *App, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			runCmd(a, c)
		}
	case nil:
	default:
		_, next := a.Update(msg)
		if _, ok := msg.(pastMsg); ok {
			runCmd(a, next)
		}
	}
}

// command types a ':' command and runs what it asks for.
func command(a *App, line string) {
	a.Update(keyRune(':'))
	typeKeys(a, line)
	_, cmd := a.Update(keyCode(tea.KeyEnter))
	runCmd(a, cmd)
}

// pastNode is the fixture node an hour before T0 (kernels 0 and 1 only,
// the others came later) and half an hour before (kernel 1 gone).
func pastRecord(t *testing.T) (string, []*model.Snapshot) {
	dir := t.TempDir()
	rec, err := record.Open(record.Options{Dir: dir, Clock: func() time.Time { return fake.T0 }})
	if err != nil {
		t.Fatal(err)
	}
	var out []*model.Snapshot
	for i, keep := range []int{2, 1} {
		s := fake.Node(fake.Options{})
		ks := s.Kernels()
		cp := *s
		cp.Seq = uint64(10 + i)
		cp.Time = fake.T0.Add(-time.Hour + time.Duration(i)*30*time.Minute)
		cp.SetKernels(ks[:keep])
		rec.Observe(&cp)
		rec.Flush()
		out = append(out, &cp)
	}
	rec.Close()
	return dir, out
}

func TestAtShowsThePastAndLiveComesBack(t *testing.T) {
	dir, past := pastRecord(t)
	live := fake.Node(fake.Options{})
	a := testApp(t, 160, 48, live, Options{History: dir})
	if strings.Contains(screen(a), "PAST") {
		t.Fatal("a banner on the live console")
	}
	command(a, "at "+past[0].Time.Add(time.Minute).Format(time.RFC3339))
	if !a.past.on || a.Snap.NumKernels() != 2 {
		t.Fatalf("after :at: past %v, %d kernels (want the past's 2)", a.past.on, a.Snap.NumKernels())
	}
	want := "PAST " + clockOf(past[0].Time, live.Time) + ", live is " + live.Time.Local().Format("15:04:05")
	if !strings.Contains(screen(a), want) {
		t.Fatalf("no banner %q:\n%s", want, screen(a))
	}
	// Live snapshots wait while in the past.
	newer := *live
	newer.Seq, newer.Time = live.Seq+1, live.Time.Add(time.Second)
	feed(a, &newer)
	if a.Snap.NumKernels() != 2 {
		t.Fatal("a live snapshot replaced the past one")
	}
	// No editing in the past.
	a.Update(keyRune('e'))
	if !strings.Contains(a.Flash.Text, "no editing in the past") {
		t.Fatalf("e in the past: flash %q", a.Flash.Text)
	}
	// ] steps to the next change, [ back.
	_, cmd := a.Update(keyRune(']'))
	runCmd(a, cmd)
	if a.Snap.Seq != past[1].Seq || a.Snap.NumKernels() != 1 {
		t.Fatalf("after ]: seq %d, %d kernels", a.Snap.Seq, a.Snap.NumKernels())
	}
	_, cmd = a.Update(keyRune('['))
	runCmd(a, cmd)
	if a.Snap.Seq != past[0].Seq {
		t.Fatalf("after [: seq %d, want %d", a.Snap.Seq, past[0].Seq)
	}
	command(a, "live")
	if a.past.on || a.Snap.Seq != newer.Seq || strings.Contains(screen(a), "PAST") {
		t.Fatalf("after :live: past %v, seq %d (want %d)", a.past.on, a.Snap.Seq, newer.Seq)
	}
	// Outside the record: said, and the console stays live.
	command(a, "at "+past[0].Time.Add(-time.Hour).Format(time.RFC3339))
	if a.past.on || !strings.Contains(a.Flash.Text, "before the record begins") {
		t.Fatalf("a time before the record: past %v, flash %q", a.past.on, a.Flash.Text)
	}
}

func TestAtWithoutHistory(t *testing.T) {
	a := testApp(t, 120, 40, fake.Node(fake.Options{}), Options{})
	command(a, "at 14:02")
	if a.past.on || !strings.Contains(a.Flash.Text, "no history") {
		t.Fatalf("flash %q", a.Flash.Text)
	}
	a.Update(keyRune('['))
	if a.past.on {
		t.Fatal("[ without a history went to the past")
	}
}

// TestPastHeaderKeepsNameAndHealth: in the past at 80 columns the banner
// shortens to the moment and "live is" moves to the second line; the
// node's name and health stay whole on the first.
func TestPastHeaderKeepsNameAndHealth(t *testing.T) {
	// The demo's header: the longest health there is.
	demo := func(s *model.Snapshot) { s.Node, s.Source.Kind = "fgtop-demo", "demo" }
	dir := t.TempDir()
	rec, err := record.Open(record.Options{Dir: dir, Clock: func() time.Time { return fake.T0 }})
	if err != nil {
		t.Fatal(err)
	}
	past := []*model.Snapshot{fake.Node(fake.Options{})}
	demo(past[0])
	past[0].Seq, past[0].Time = 10, fake.T0.Add(-time.Hour)
	rec.Observe(past[0])
	rec.Flush()
	rec.Close()
	live := fake.Node(fake.Options{})
	demo(live)
	a := testApp(t, 80, 24, live, Options{History: dir})
	command(a, "at "+past[0].Time.Add(time.Minute).Format(time.RFC3339))
	if !a.past.on {
		t.Fatal("not in the past after :at")
	}
	h := a.viewHeader(80)
	first := stripANSI(h[0])
	mustContain(t, "past header", first, "PAST "+clockOf(past[0].Time, live.Time), "fgtop fgtop-demo", "demo (synthetic telemetry)")
	if strings.Contains(first, "…") || strings.Contains(first, "~") {
		t.Errorf("first header line cut: %q", first)
	}
	if len(h) < 2 || !strings.Contains(stripANSI(h[1]), "live is "+live.Time.Local().Format("15:04:05")) {
		t.Errorf("the live time is not on the second line: %q", h)
	}
	// Wide, the banner is whole on the first line.
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	mustContain(t, "wide past header", stripANSI(a.viewHeader(200)[0]), ", live is ")
}

// histText is a console's history, device by device, sample by sample.
func histText(h history) string {
	var b strings.Builder
	for _, k := range slices.SortedFunc(maps.Keys(h), func(x, y model.DeviceKey) int { return strings.Compare(x.String(), y.String()) }) {
		dh := h[k]
		fmt.Fprintf(&b, "%s sec %d:", k, dh.sec)
		for _, r := range []*ring{&dh.alloc, &dh.Util, &dh.Mem} {
			for i := range r.N {
				fmt.Fprintf(&b, " %v", r.at(i))
			}
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestLiveGraphsGoOnInThePast: the live snapshots that come while the
// console shows the past are in the graphs it comes back to, second by
// second, as a console that stayed live draws them (the tour: coming
// back drew those seconds as the last reading before the past, so a
// change showed at the wrong time for five minutes).
func TestLiveGraphsGoOnInThePast(t *testing.T) {
	dir, past := pastRecord(t)
	live := fake.Node(fake.Options{})
	at := func(i int) *model.Snapshot {
		cp := *live
		// Two seconds a content (the engine's generation): the second
		// a poll that read what the first read.
		cp.Seq, cp.Time, cp.Gen = live.Seq+uint64(i), live.Time.Add(time.Duration(i)*time.Second), uint64(1000+i/2)
		cp.Devices = slices.Clone(live.Devices)
		for j := range cp.Devices {
			tel := model.Telemetry{}
			if cp.Devices[j].Telemetry != nil {
				tel = *cp.Devices[j].Telemetry
			}
			tel.UtilGPU = model.Some(uint32(i / 2 * 7 % 100))
			cp.Devices[j].Telemetry = &tel
		}
		return &cp
	}
	// Alone, and as serve's sessions, sharing their samples: the one
	// that stayed live alone then records none of them.
	for _, shared := range []bool{false, true} {
		var sm *Samples
		if shared {
			sm = NewSamples()
		}
		stayed := testApp(t, 160, 48, live, Options{Samples: sm})
		a := testApp(t, 160, 48, live, Options{History: dir, Samples: sm})
		command(a, "at "+past[0].Time.Add(time.Minute).Format(time.RFC3339))
		if !a.past.on {
			t.Fatal("not in the past")
		}
		for i := 1; i <= 20; i++ {
			if !shared {
				feed(stayed, at(i))
			}
			feed(a, at(i))
		}
		command(a, "live")
		if shared {
			for i := 1; i <= 20; i++ {
				feed(stayed, at(i))
			}
		}
		if a.past.on {
			t.Fatal("still in the past")
		}
		if got, want := histText(a.hist), histText(stayed.hist); got != want || !strings.Contains(got, " 0.7 ") {
			t.Errorf("shared %v: back from the past, the graphs read\n%s\na console that stayed live\n%s", shared, got, want)
		}
	}
}

// TestPastAgesCountToThePast: in the past a kernel's AGE is counted to the
// moment shown, not to the live clock (a kernel 31 s old then read 4m).
func TestPastAgesCountToThePast(t *testing.T) {
	dir, past := pastRecord(t)
	live := fake.Node(fake.Options{})
	now := fake.T0.Add(2 * time.Hour)
	a := testApp(t, 200, 60, live, Options{History: dir, Now: func() time.Time { return now }})
	for a.focus != paneKernels {
		a.Update(keyCode(tea.KeyTab))
	}
	at := past[0].Time.Add(time.Minute)
	command(a, "at "+at.Format(time.RFC3339))
	if !a.past.on {
		t.Fatal("not in the past")
	}
	a.Update(keyRune('f')) // all kernels, not those on the selected device
	k := a.Snap.Kernels()[0]
	if k.Seen.IsZero() {
		t.Skip("the record gives its kernels no first-seen time")
	}
	v := stripANSI(screen(a))
	thenAge, liveAge := kit.FmtAge(a.Snap.Time.Sub(k.Seen)), kit.FmtAge(now.Sub(k.Seen))
	if thenAge == liveAge {
		t.Fatalf("the test cannot tell the ages apart: %s", thenAge)
	}
	row := ""
	for _, ln := range strings.Split(v, "\n") {
		if strings.Contains(ln, string(k.ID)[:8]) {
			row = ln
			break
		}
	}
	if !strings.Contains(row, " "+thenAge+" ") || strings.Contains(row, " "+liveAge+" ") {
		t.Errorf("kernel %s's row in the past: %q; want its age then, %s (not %s)", k.ID[:8], row, thenAge, liveAge)
	}
}

// TestNoDemoRestartInThePast: R (the demo's restart of its agents) acts
// on the node as it is, which a console in the past does not show: it is
// refused there, as editing is.
func TestNoDemoRestartInThePast(t *testing.T) {
	dir, past := pastRecord(t)
	restarts := 0
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{History: dir, DemoRestart: func() (string, error) {
		restarts++
		return "restarted", nil
	}})
	command(a, "at "+past[0].Time.Add(time.Minute).Format(time.RFC3339))
	if !a.past.on {
		t.Fatal("not in the past")
	}
	_, cmd := a.Update(keyRune('R'))
	runCmd(a, cmd)
	if restarts != 0 || !strings.Contains(a.Flash.Text, "no restarting in the past") {
		t.Fatalf("R in the past: %d restarts, flash %q", restarts, a.Flash.Text)
	}
}

// TestPastOffersNoEditing: in the past, e (edit partition) and the demo's
// R (restart) act on a node the screen does not show, so the footer, the
// help and the header do not offer them (the footer went on listing
// both, each answering only "no ... in the past"); live they are
// offered again. Pressed anyway, each still says why it does nothing.
func TestPastOffersNoEditing(t *testing.T) {
	dir, past := pastRecord(t)
	live := fake.Node(fake.Options{})
	a := testApp(t, 240, 60, live, Options{History: dir, DemoRestart: func() (string, error) { return "restarted", nil }})
	offered := func() (footer, help string) {
		a.Flash = kit.Flash{}
		lines := strings.Split(screen(a), "\n")
		footer = lines[len(lines)-1]
		a.Update(keyRune('?'))
		help = screen(a)
		a.Update(keyCode(tea.KeyEscape))
		return footer, help
	}
	edit, restart := "edit partition", "demo: restart"
	footer, help := offered()
	for _, w := range []string{edit, restart} {
		if !strings.Contains(footer, w) || !strings.Contains(help, w) {
			t.Fatalf("live: %q not offered; footer %q, help:\n%s", w, footer, help)
		}
	}
	command(a, "at "+past[0].Time.Add(time.Minute).Format(time.RFC3339))
	if !a.past.on {
		t.Fatal("not in the past")
	}
	footer, help = offered()
	for _, w := range []string{edit, restart} {
		if strings.Contains(footer, w) || strings.Contains(help, w) {
			t.Errorf("in the past %q is offered; footer %q, help:\n%s", w, footer, help)
		}
	}
	if !strings.Contains(help, "[") || !strings.Contains(footer, "help") {
		t.Errorf("in the past the footer or help lost the rest; footer %q, help:\n%s", footer, help)
	}
	for _, k := range []rune{'e', 'R'} {
		a.Update(keyRune(k))
		if !strings.Contains(a.Flash.Text, "in the past") {
			t.Errorf("%c in the past: flash %q", k, a.Flash.Text)
		}
	}
	command(a, "live")
	footer, help = offered()
	for _, w := range []string{edit, restart} {
		if !strings.Contains(footer, w) || !strings.Contains(help, w) {
			t.Errorf("live again: %q not offered; footer %q", w, footer)
		}
	}
}

// stretchOf is a stretch as the footer says it: each end its time of day,
// from with its date where it is not the console's live day (fixedNow),
// to with its date where it is not from's, in any zone.
func stretchOf(from, to time.Time) string {
	clock := func(t, ref time.Time) string {
		y, m, d := t.Local().Date()
		ry, rm, rd := ref.Local().Date()
		switch {
		case y == ry && m == rm && d == rd:
			return t.Local().Format("15:04:05")
		case y == ry:
			return t.Local().Format("01-02 15:04:05")
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	return clock(from, fixedNow()) + " to " + clock(to, from)
}

// clockOf is t by the local clock, dated where it is not ref's day, as
// the header's PAST marker says a past moment.
func clockOf(t, ref time.Time) string {
	y, m, d := t.Local().Date()
	if ry, rm, rd := ref.Local().Date(); y == ry && m == rm && d == rd {
		return t.Local().Format("15:04:05")
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// inZones runs f with the console's local time in zones where the
// fixtures' hours fall on either side of midnight: UTC, UTC+14 and UTC-10
// (fake.T0 is midnight there) and UTC+14:45 (an hour before it is 23:45).
func inZones(t *testing.T, f func(t *testing.T)) {
	loc := time.Local
	t.Cleanup(func() { time.Local = loc })
	for _, z := range []*time.Location{time.UTC, time.FixedZone("UTC+14", 14*3600), time.FixedZone("UTC-10", -10*3600),
		time.FixedZone("UTC+14:45", 14*3600+45*60)} {
		time.Local = z
		t.Run(z.String(), f)
	}
}

// recordAt is a record of the fixture node observed at each of at, one
// recorder each (a gap between them), in a new directory.
func recordAt(t *testing.T, at ...time.Time) string {
	t.Helper()
	dir := t.TempDir()
	var now time.Time
	for i, at := range at {
		now = at
		rec, err := record.Open(record.Options{Dir: dir, Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		cp := *fake.Node(fake.Options{})
		cp.Seq, cp.Time = uint64(10+i), at
		rec.Observe(&cp)
		rec.Flush()
		rec.Close()
	}
	return dir
}

// TestAtOutsideTheRecordAt80: a refused :at says, at 80 columns, the span
// the record covers (what the operator needs to pick a time it has); the
// whole refusal was cut before it ("… is before the record begins; the
// recor…"). A record of two days ago is dated: it read "covers 08:00:00
// to 09:00:00", as if it were today's.
func TestAtOutsideTheRecordAt80(t *testing.T) {
	dir, past := pastRecord(t)
	old := []time.Time{fake.T0.Add(-50 * time.Hour), fake.T0.Add(-49 * time.Hour)}
	oldDir := recordAt(t, old...)
	inZones(t, func(t *testing.T) {
		// The recorder stopped at the console's clock (fake.T0).
		span := stretchOf(past[0].Time, fake.T0)
		for _, c := range []struct {
			dir  string
			at   time.Time
			want string
		}{
			{dir, past[0].Time.Add(-time.Hour), "before the record: " + span},
			{dir, fake.T0.Add(time.Hour), "still to come; the record: " + span},
			{oldDir, old[0].Add(-time.Hour), "before the record: " + stretchOf(old[0], old[1])},
		} {
			a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{History: c.dir})
			command(a, "at "+c.at.Format(time.RFC3339))
			lines := strings.Split(screen(a), "\n")
			if foot := lines[len(lines)-1]; a.past.on || !strings.Contains(foot, c.want) {
				t.Errorf(":at %s: past %v, footer %q; want %q", c.at, a.past.on, foot, c.want)
			}
		}
	})
}

// TestAtInAGapAt80: :at a moment the record lacks (no recorder ran) says,
// at 80 columns, which stretch it lacks, so the operator can ask after
// it; the whole note was cut before it ("… not recorded: the recorder
// stopp…"). A gap of two days ago is dated.
func TestAtInAGapAt80(t *testing.T) {
	var dirs []string
	backs := []time.Duration{0, 48 * time.Hour}
	for _, back := range backs {
		dirs = append(dirs, recordAt(t, fake.T0.Add(-back-time.Hour), fake.T0.Add(-back-30*time.Minute)))
	}
	inZones(t, func(t *testing.T) {
		for i, back := range backs {
			from, to := fake.T0.Add(-back-time.Hour), fake.T0.Add(-back-30*time.Minute)
			a := testApp(t, 80, 24, fake.Node(fake.Options{}), Options{History: dirs[i]})
			command(a, "at "+from.Add(15*time.Minute).Format(time.RFC3339))
			// Dated, the tail ("; shown as last recorded") is cut at 80
			// columns; the stretch is whole.
			want := "the record lacks " + stretchOf(from, to) + ";"
			lines := strings.Split(screen(a), "\n")
			if foot := lines[len(lines)-1]; !a.past.on || !strings.Contains(foot, want) {
				t.Errorf("%v back: past %v, footer %q; want %q", back, a.past.on, foot, want)
			}
		}
	})
}

// TestEscLeavesThePast: esc in the past did nothing and the footer never
// said how to come back (the tour: only :live did). The footer offers
// "esc back to live", a flash first goes with the same esc, and a search
// in the past is cleared before the past is left.
func TestEscLeavesThePast(t *testing.T) {
	dir, past := pastRecord(t)
	live := fake.Node(fake.Options{})
	a := testApp(t, 80, 24, live, Options{History: dir, ReadOnly: true})
	enter := func() {
		t.Helper()
		command(a, "at "+past[0].Time.Add(time.Minute).Format(time.RFC3339))
		if !a.past.on {
			t.Fatalf("not in the past: flash %q", a.Flash.Text)
		}
		a.Flash = kit.Flash{}
	}
	enter()
	if foot := stripANSI(a.viewFooter(80)); !strings.Contains(foot, "esc back to live") {
		t.Errorf("the past's footer does not offer the way back: %q", foot)
	}
	a.Update(keyCode(tea.KeyEscape))
	if a.past.on || strings.Contains(screen(a), "PAST") {
		t.Fatal("esc left the console in the past")
	}
	enter()
	command(a, "filter numa0")
	a.Update(keyCode(tea.KeyEscape))
	if !a.past.on || a.Kernels.Filter != "" {
		t.Fatalf("esc over a search in the past: past %v, filter %q (want the search cleared first)", a.past.on, a.Kernels.Filter)
	}
	a.Update(keyCode(tea.KeyEscape))
	if a.past.on {
		t.Fatal("the second esc left the console in the past")
	}
}
