package editor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/kit"
)

// refusedEditor is an editor showing the refused list of a result with n
// refusals, the i-th of kernel k<i> at base+i seconds, worded "why <i>",
// with the console's moving keys in the list's scope.
func refusedEditor(t testing.TB, n, w, h int) *Editor {
	t.Helper()
	st, err := kit.NewStyles(themes.MustBuiltin(themes.Mono), false)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	res := &replay.Result{Sessions: n, From: base, To: base.Add(ReplaySpan)}
	for i := range n {
		res.Refused = append(res.Refused, replay.Refusal{At: base.Add(time.Duration(i) * time.Second), Kernel: model.KernelID(fmt.Sprintf("k%06d", i)),
			Agent: "i-node-a", Requested: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5")}, Reason: fmt.Sprintf("why %06d", i)})
	}
	mv := func(act kit.Action, k string) kit.Binding {
		return kit.NewBinding(act, kit.GrpMove, ScRefused, 0, []string{k}, k, k)
	}
	keys := kit.KeyMapOf(kit.RoleOperator, ScRefused, []kit.Binding{mv(kit.ActUp, "k"), mv(kit.ActDown, "j"), mv(kit.ActTop, "g"),
		mv(kit.ActBottom, "G"), mv(kit.ActPageUp, "pgup"), mv(kit.ActPageDown, "pgdown")})
	e := &Editor{Common: &kit.Common{St: st, Keys: keys, Width: w, Height: h}}
	e.rp.dir, e.rp.res, e.rp.gen, e.rp.resGen = "/nowhere", res, 1, 1
	e.Showing = edRefused
	return e
}

func plain(rows []string) string { return ansi.Strip(strings.Join(rows, "\n")) }

// press sends the editor a key by its name (j, G, pgdown, ...).
func press(e *Editor, k string) {
	var msg tea.KeyPressMsg
	switch k {
	case "pgup":
		msg = tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
	default:
		msg = tea.KeyPressMsg{Code: rune(k[0]), Text: k}
	}
	e.Key(msg)
}

// TestRefusedListScrolls: the list draws the refusals from its position
// on, each with its reason under it, and says which of how many it
// shows; j/k and the wheel move a refusal (a screen never begins with a
// reason whose line is off it: the tour), a page what the frame showed,
// G to the last screen, whose last row is the last refusal's reason, g
// back; the header stays.
func TestRefusedListScrolls(t *testing.T) {
	const n, w, h = 1000, 100, 12
	e := refusedEditor(t, n, w, h)
	v := plain(e.viewRefused(w, h))
	// 12 rows: the title, the header, then 5 refusals of two rows each.
	for _, want := range []string{"Refused under agent.toml as it is", "1-5/1000", "TIME", "k000000", "why 000000", "k000004", "why 000004"} {
		if !strings.Contains(v, want) {
			t.Errorf("first screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "k000005") {
		t.Errorf("first screen shows a sixth refusal in 10 rows:\n%s", v)
	}
	press(e, "j")
	press(e, "j")
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "3-7/1000") || strings.Contains(v, "k000001") || !strings.HasPrefix(strings.Split(v, "\n")[2], " 2026") {
		t.Errorf("two refusals down:\n%s", v)
	}
	press(e, "k")
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "2-6/1000") || !strings.HasPrefix(strings.Split(v, "\n")[2], " 2026") {
		t.Errorf("one refusal up:\n%s", v)
	}
	press(e, "j")
	press(e, "pgdown")
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "8-12/1000") || !strings.HasPrefix(strings.Split(v, "\n")[2], " 2026") {
		t.Errorf("a page down:\n%s", v)
	}
	press(e, "pgup")
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "3-7/1000") {
		t.Errorf("a page up again:\n%s", v)
	}
	press(e, "G")
	v = plain(e.viewRefused(w, h))
	rows := strings.Split(v, "\n")
	if !strings.Contains(v, "996-1000/1000") || !strings.Contains(rows[len(rows)-1], "why 000999") || len(rows) != h {
		t.Errorf("G: the last screen (%d rows):\n%s", len(rows), v)
	}
	if !strings.Contains(rows[1], "TIME") {
		t.Errorf("G: the header scrolled away:\n%s", v)
	}
	press(e, "j")
	if v2 := plain(e.viewRefused(w, h)); v2 != v {
		t.Errorf("j past the end moved the list:\n%s", v2)
	}
	press(e, "g")
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "1-5/1000") {
		t.Errorf("g:\n%s", v)
	}
	e.Update(tea.MouseWheelMsg(tea.Mouse{Button: tea.MouseWheelDown}))
	e.Update(tea.MouseWheelMsg(tea.Mouse{Button: tea.MouseWheelDown}))
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "3-7/1000") {
		t.Errorf("two wheel steps down:\n%s", v)
	}
}

// TestRefusedListBeginsWithALine: refusals of one to three rows, moved
// through by every key in turn at 80x24, always begin the screen with a
// refusal's line, and what each asked is shown whole at 80 columns (the
// tour: a page down began with the end of a reason; ASKED was cut to …).
func TestRefusedListBeginsWithALine(t *testing.T) {
	const w, h = 80, 24
	e := refusedEditor(t, 300, w, h)
	for i := range e.rp.res.Refused {
		e.rp.res.Refused[i].Reason = strings.Repeat("because ", 1+i%3*10) + fmt.Sprintf("END%d", i)
		e.rp.res.Refused[i].Requested = model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.70"), model.SlotCPU: model.MustDec("4"), model.SlotMem: model.NewDec(64<<30, 0)}
	}
	for n, k := range strings.Fields(strings.Repeat("j j pgdown j pgdown pgdown k pgup j pgdown pgup pgup k ", 8) + "G k pgup G pgup j") {
		press(e, k)
		rows := strings.Split(plain(e.viewRefused(w, h)), "\n")
		if !strings.HasPrefix(rows[2], " 11-20 ") {
			t.Fatalf("after key %d (%s) the screen begins mid-refusal:\n%s", n, k, strings.Join(rows, "\n"))
		}
		if !strings.Contains(rows[2], "cpu=4 cuda.shares=0.70 mem=64g") || !strings.Contains(rows[1], "ASKED") {
			t.Fatalf("at 80 columns what was asked is cut:\n%s", strings.Join(rows, "\n"))
		}
	}
}

// TestRefusedListTallReasons: a reason taller than the screen is read to
// its end a row at a time, a page never passes a row unseen however tall
// the refusals above or below, and even a screen of three rows shows the
// reasons and where it is.
func TestRefusedListTallReasons(t *testing.T) {
	const w, h = 40, 8
	e := refusedEditor(t, 10, w, h)
	refs := e.rp.res.Refused
	for i := range 5 {
		// Ten rows or more at this width, on a screen of six.
		refs[i].Reason = strings.Repeat(fmt.Sprintf("r%d ", i), 100) + fmt.Sprintf("END%d", i)
	}
	refs[7].CouldRunOn = []model.AgentID{"i-node-b"}
	seen := map[string]bool{}
	note := func(v string) {
		for _, ln := range strings.Split(v, "\n")[2:] {
			seen[strings.TrimSpace(ln)] = true
		}
	}
	v := plain(e.viewRefused(w, h))
	note(v)
	for range 200 {
		press(e, "j")
		note(plain(e.viewRefused(w, h)))
	}
	for i := range 5 {
		if !strings.Contains(strings.Join(keys(seen), "\n"), fmt.Sprintf("END%d", i)) {
			t.Errorf("row by row, the end of refusal %d's reason was never on the screen", i)
		}
	}
	// Page by page, down then up: every row of every refusal shows.
	all := map[string]bool{}
	press(e, "g")
	for range 40 {
		for _, ln := range strings.Split(plain(e.viewRefused(w, h)), "\n")[2:] {
			all[strings.TrimSpace(ln)] = true
		}
		press(e, "pgdown")
	}
	up := map[string]bool{}
	press(e, "G")
	for range 40 {
		for _, ln := range strings.Split(plain(e.viewRefused(w, h)), "\n")[2:] {
			up[strings.TrimSpace(ln)] = true
		}
		press(e, "pgup")
	}
	for ln := range seen {
		if !all[ln] || !up[ln] {
			t.Errorf("paging down (%v) or up (%v) never showed %q", all[ln], up[ln], ln)
		}
	}
	// Three rows: the title, the header and one row, the reasons reached.
	small := refusedEditor(t, 1000, 100, 3)
	v = plain(small.viewRefused(100, 3))
	if !strings.Contains(v, "1-1/1000") {
		t.Errorf("three rows: no position:\n%s", v)
	}
	press(small, "j")
	if v := plain(small.viewRefused(100, 3)); !strings.Contains(v, "why 000000") {
		t.Errorf("three rows, one down: the first reason is not shown:\n%s", v)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// BenchmarkRefusedList is one frame of the refused list of 200,000
// refusals (a busy week's under a small draft): BENCHMARKS.md.
func BenchmarkRefusedList(b *testing.B) {
	e := refusedEditor(b, 200000, 160, 48)
	e.rp.refOff = 100000
	b.ReportAllocs()
	for b.Loop() {
		e.viewRefused(160, 48)
	}
}

// TestReplayLineLeadsWithTheTotal: where several agents refuse, the line
// says how many of how many sessions would not have started first (a
// narrow screen cuts the rest), then each agent's count and the slots
// over its amount; one agent's refusals keep the wording.
func TestReplayLineLeadsWithTheTotal(t *testing.T) {
	e := refusedEditor(t, 8, 200, 40)
	res := e.rp.res
	res.Sessions = 469
	res.Agents = []replay.AgentResult{
		{Agent: "i-demo-numa0", Sessions: 249, Refused: res.Refused[:5], Slots: []replay.SlotStat{{Slot: model.SlotCPU, Amount: model.MustDec("15"), Peak: model.MustDec("20"), Over: time.Second}}},
		{Agent: "i-demo-numa1", Sessions: 220, Refused: res.Refused[5:]},
	}
	text := func() string {
		var sb strings.Builder
		for _, sp := range e.replayLine() {
			sb.WriteString(sp.Text)
		}
		return sb.String()
	}
	// Under the file as it is the refused sessions are ones the record saw
	// run; under a draft, ones that would not have started.
	if got, want := text(), "last 7d under agent.toml as it is: 8 of 469 sessions ran that these amounts refuse: i-demo-numa0 5 (cpu peak 20 > 15); i-demo-numa1 3"; got != want {
		t.Errorf("two agents:\n got %q\nwant %q", got, want)
	}
	e.Req.Slots = []partition.SlotSet{{Agent: "i-demo-numa0", Slot: model.SlotCPU, Amount: model.MustDec("14")}}
	if got, want := text(), "last 7d under this draft: 8 of 469 sessions would not have started: i-demo-numa0 5 (cpu peak 20 > 15); i-demo-numa1 3"; got != want {
		t.Errorf("two agents, a draft:\n got %q\nwant %q", got, want)
	}
	e.Req.Slots = nil
	res.Agents = res.Agents[:1]
	res.Refused = res.Refused[:5]
	if got, want := text(), "last 7d under agent.toml as it is: 5 sessions of i-demo-numa0 ran that these amounts refuse (cpu peak 20 > 15)"; got != want {
		t.Errorf("one agent:\n got %q\nwant %q", got, want)
	}
	// A record that holds less says how much (a recorder started two
	// minutes ago said "last 7d": the tour).
	res.Agents[0].Absent = true
	if got := text(); !strings.Contains(got, "5 sessions of i-demo-numa0 ran that these amounts refuse (not an agent of the draft)") {
		t.Errorf("an agent the draft lacks: %q", got)
	}
	res.Agents[0].Absent = false
	res.To = res.From.Add(2 * time.Minute)
	e.rp.recAt = res.To
	e.Now = func() time.Time { return res.To.Add(time.Second) }
	if got := text(); !strings.HasPrefix(got, "last 2m (all the record holds) under agent.toml as it is: 5 sessions") {
		t.Errorf("a record of two minutes: %q", got)
	}
	// Read a minute ago, the record has grown by half since: said (the
	// tour's draft judged 15 s of record while minutes were recorded).
	e.Now = func() time.Time { return res.To.Add(time.Minute) }
	if got := text(); !strings.HasPrefix(got, "last 2m (all the record held, read 1m ago) under agent.toml as it is: 5 sessions") {
		t.Errorf("a record of two minutes read a minute ago: %q", got)
	}
	// 1m33s: plan --replay's first line says (2m) for the same record,
	// and so does the line (it said 1m: the tour).
	res.To = res.From.Add(93 * time.Second)
	e.rp.recAt = res.To
	e.Now = func() time.Time { return res.To.Add(time.Second) }
	if got, want := text(), "last "+replay.Days(93*time.Second)+" (all the record holds)"; !strings.HasPrefix(got, want) || replay.Days(93*time.Second) != "2m" {
		t.Errorf("a record of 1m33s: %q, want it to begin %q as plan's (2m)", got, want)
	}
}

// TestRefusedTitleSaysWhatItIsUnder: with no change the list's title
// says the file as it is, as the line does ("ran that these amounts
// refuse"), not "Refused under the draft" (the tour: R on a draft of no
// change titled sessions the record saw run as the draft's refusals);
// after an edit, the draft.
func TestRefusedTitleSaysWhatItIsUnder(t *testing.T) {
	const w, h = 140, 12
	e := refusedEditor(t, 3, w, h)
	title := func() string { return plain(e.viewRefused(w, h)[:1]) }
	if got := title(); !strings.Contains(got, "Refused under agent.toml as it is") || strings.Contains(got, "draft") {
		t.Errorf("no change: title %q", got)
	}
	e.Req.Slots = []partition.SlotSet{{Agent: "i-node-a", Slot: model.SlotCPU, Amount: model.MustDec("14")}}
	if got := title(); !strings.Contains(got, "Refused under the draft") {
		t.Errorf("a draft: title %q", got)
	}
}

// TestNoneRefusedSaysWhatItIsUnder: with nothing refused, the line under
// the title says what starts every session as the title does: the file
// as it is with no change (it said "under this draft" there too), the
// draft after an edit; at 80 columns as well.
func TestNoneRefusedSaysWhatItIsUnder(t *testing.T) {
	for _, w := range []int{140, 80} {
		e := refusedEditor(t, 0, w, 12)
		line := func() string { return plain(e.viewRefused(w, 12)[1:2]) }
		if got := line(); !strings.Contains(got, "starts under agent.toml as it is") && !strings.Contains(got, "none refused") || strings.Contains(got, "draft") {
			t.Errorf("%d columns, no change: %q", w, got)
		}
		e.Req.Slots = []partition.SlotSet{{Agent: "i-node-a", Slot: model.SlotCPU, Amount: model.MustDec("14")}}
		if got := line(); !strings.Contains(got, "starts under this draft") && !strings.Contains(got, "none refused") {
			t.Errorf("%d columns, a draft: %q", w, got)
		}
	}
}

// TestRefusedListRunningAtStart: a refusal of a session already running
// when the span began says so in the list, as plan --replay's text does:
// its TIME is the span's start, not when it arrived (the tour).
func TestRefusedListRunningAtStart(t *testing.T) {
	const w, h = 100, 12
	e := refusedEditor(t, 3, w, h)
	e.rp.res.Refused[0].Before = true
	v := plain(e.viewRefused(w, h))
	if !strings.Contains(v, "(running at the start) why 000000") {
		t.Errorf("the first refusal, running at the start, does not say so:\n%s", v)
	}
	if strings.Contains(v, "(running at the start) why 000001") {
		t.Errorf("a refusal of an arrival says it was running at the start:\n%s", v)
	}
}

// TestRecordForYoungRecord: the editor's own copy of a record younger
// than the span stands in for a fresh read only a tenth of what it holds
// (at least 5 s), as the process's cache keeps it (replay.KeepFor), not
// ReplayRecordTTL: a draft opened 15 s into a recording was judged, and S
// suggested, from those 15 s for five minutes. A record of the whole span
// is kept the whole TTL.
func TestRecordForYoungRecord(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	read := start.Add(15 * time.Second)
	e := &Editor{Common: &kit.Common{}}
	e.rp.dir = "/nowhere"
	e.rp.rec, e.rp.recAt = &replay.Record{From: start, To: read}, read
	for _, tc := range []struct {
		after time.Duration
		kept  bool
	}{{4 * time.Second, true}, {6 * time.Second, false}, {time.Minute, false}} {
		e.Now = func() time.Time { return read.Add(tc.after) }
		if rec, dir, _ := e.recordFor(); (rec != nil) != tc.kept || (dir == "") != tc.kept {
			t.Errorf("15 s of record read %v ago: kept %v (dir %q), want kept %v", tc.after, rec != nil, dir, tc.kept)
		}
	}
	e.rp.rec = &replay.Record{From: read.Add(-ReplaySpan), To: read}
	e.Now = func() time.Time { return read.Add(ReplayRecordTTL - time.Second) }
	if rec, _, _ := e.recordFor(); rec == nil {
		t.Errorf("a record of the whole span read %v ago was not kept", ReplayRecordTTL-time.Second)
	}
	e.Now = func() time.Time { return read.Add(ReplayRecordTTL) }
	if rec, _, _ := e.recordFor(); rec != nil {
		t.Errorf("a record of the whole span read %v ago was kept", ReplayRecordTTL)
	}
}

// TestRefusedPositionAt80Columns: at 80 columns the title keeps which of
// how many refusals are shown and esc back, its span description in a
// short form instead: a record of 37s made the title too long for both, and the
// whole right-hand part went (the tour: 11 refusals, G).
func TestRefusedPositionAt80Columns(t *testing.T) {
	const n, w, h = 11, 80, 14
	e := refusedEditor(t, n, w, h)
	e.rp.res.To = e.rp.res.From.Add(37 * time.Second)
	e.Now = time.Now
	title := func() string { return plain(e.viewRefused(w, h)[:1]) }
	if got := title(); !strings.Contains(got, "Refused by agent.toml  last 37s (whole record)") || !strings.Contains(got, "1-6/11") || !strings.Contains(got, "esc back") {
		t.Errorf("first screen's title: %q", got)
	}
	press(e, "G")
	if got := title(); !strings.Contains(got, "6-11/11") || !strings.Contains(got, "esc back") {
		t.Errorf("title after G: %q", got)
	}
}

// TestRefusedTitleShortAt80: at 80 columns the refused list's title lost
// its end, "of the record" and "read 1m ago" cut; it now takes the
// longest of its forms that fits whole: the file or the draft, the span,
// whether that is all the record holds and how long ago it was read,
// beside esc back and the position. The long form stays where it fits,
// and the line of a list with no refusal is not cut either.
func TestRefusedTitleShortAt80(t *testing.T) {
	for _, c := range []struct {
		name     string
		n, w     int
		readAgo  bool
		want     []string
		wantNot  []string
		position string
	}{
		{"a young record", 3, 80, false, []string{"Refused under agent.toml as it is  last 2m (whole record) "}, nil, ""},
		{"read a minute ago", 3, 80, true, []string{"Refused by agent.toml  last 2m (whole record, read 1m ago) "}, nil, ""},
		{"read a minute ago, scrolled", 11, 80, true, []string{"Refused by agent.toml  last 2m, read 1m ago "}, nil, "1-6/11"},
		{"wide", 11, 200, true, []string{"Refused under agent.toml as it is  last 2m (all the record held, read 1m ago) of the record "}, nil, "1-6/11"},
		{"nothing refused", 0, 80, true, []string{"Refused by agent.toml  last 2m (whole record, read 1m ago) ", "none refused in the last 2m (whole record, read 1m ago)"}, nil, ""},
	} {
		e := refusedEditor(t, c.n, c.w, 14)
		res := e.rp.res
		res.To = res.From.Add(2 * time.Minute)
		e.rp.recAt = res.To
		e.Now = func() time.Time { return res.To.Add(time.Second) }
		if c.readAgo {
			e.Now = func() time.Time { return res.To.Add(time.Minute) }
		}
		rows := e.viewRefused(c.w, 14)
		shown := plain(rows[:2])
		for _, want := range c.want {
			if !strings.Contains(shown, want) {
				t.Errorf("%s: want %q in\n%s", c.name, want, shown)
			}
		}
		if !strings.Contains(shown, "esc back") || !strings.Contains(shown, c.position) || strings.Contains(shown, "…") {
			t.Errorf("%s: the title lost esc back or the position %q, or was cut:\n%s", c.name, c.position, shown)
		}
		for _, r := range rows {
			if kit.Width(ansi.Strip(r)) > c.w {
				t.Errorf("%s: a row wider than %d: %q", c.name, c.w, ansi.Strip(r))
			}
		}
	}
}
