package fleet

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/history/histtext"
	"github.com/fgtop/fgtop/model"
)

// TestNewHistoryQuery: exactly one id is asked; the span takes every form
// history.ParseWhen takes, and an end before its start is refused, each
// in the flag's words.
func TestNewHistoryQuery(t *testing.T) {
	now := time.Date(2026, 11, 27, 16, 0, 0, 0, time.Local)
	cases := []struct {
		name                 string
		dev, kern, user      string
		since, until         string
		wantSince, wantUntil time.Time
		err                  string
	}{
		{name: "device", dev: "cuda:0"},
		{name: "none", err: "name one of --device ID, --kernel ID, --user ID"},
		{name: "two", dev: "cuda:0", user: "u1", err: "name one of"},
		{name: "span", kern: "k1", since: "14:02", until: "-1h",
			wantSince: time.Date(2026, 11, 27, 14, 2, 0, 0, time.Local), wantUntil: now.Add(-time.Hour)},
		{name: "bad since", user: "u1", since: "25:99", err: "--since: "},
		{name: "bad until", user: "u1", until: "soon", err: "--until: "},
		{name: "backwards", user: "u1", since: "15:00", until: "14:00", err: "is before --since"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := NewHistoryQuery(c.dev, c.kern, c.user)
			if err == nil {
				err = q.SetSpan(c.since, c.until, now)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.Device != c.dev || q.Kernel != c.kern || q.User != c.user || !q.Since.Equal(c.wantSince) || !q.Until.Equal(c.wantUntil) {
				t.Fatalf("%+v", q)
			}
		})
	}
}

// TestWriteHistory: the table names each row's node, marks a hold that
// began before the span (<), one still open and one that ended in a gap
// (?), sorts the amounts and dashes what is not known; the stretches the
// records lack and the nodes that did not answer follow, and Shortfall
// counts them. The JSON is the document with its schema.
func TestWriteHistory(t *testing.T) {
	row := func(node, from, to string, since, open, gone bool) HistoryInterval {
		return HistoryInterval{Node: node, Interval: histtext.Interval{Device: "cuda:0", Kernel: "k-" + node, Agent: "a0", User: "u1",
			Amounts: map[string]string{"cuda.shares": "0.5", "cpu": "2"}, From: from, To: to, Since: since, Open: open, Gone: gone}}
	}
	fh := &FleetHistory{Schema: FleetHistorySchema, Intervals: []HistoryInterval{
		row("n1:2222", "2026-11-27T14:00:00Z", "2026-11-27T14:30:00Z", true, false, false),
		row("n2:2222", "2026-11-27T14:10:00Z", "2026-11-27T15:00:00Z", false, true, false),
		row("n3:2222", "2026-11-27T14:20:00Z", "2026-11-27T14:40:00Z", false, false, true),
	},
		Missing:  []HistoryGap{{Node: "n3:2222", From: "2026-11-27T14:40:00Z", To: "2026-11-27T14:50:00Z", Why: "the recorder was not running"}},
		Problems: []HistoryProblem{{Node: "n4:2222", Error: "dial: connection refused"}}}
	fh.Intervals[0].Agent = ""
	var b bytes.Buffer
	if err := WriteHistory(&b, fh, false, true); err != nil {
		t.Fatal(err)
	}
	want := `FROM                   TO                     NODE     DEVICE  AMOUNT                 KERNEL     SESSION  USER  AGENT
<2026-11-27T14:00:00Z  2026-11-27T14:30:00Z   n1:2222  cuda:0  cpu=2,cuda.shares=0.5  k-n1:2222  -        u1    -
2026-11-27T14:10:00Z   open                   n2:2222  cuda:0  cpu=2,cuda.shares=0.5  k-n2:2222  -        u1    a0
2026-11-27T14:20:00Z   2026-11-27T14:40:00Z?  n3:2222  cuda:0  cpu=2,cuda.shares=0.5  k-n3:2222  -        u1    a0
missing: n3:2222 2026-11-27T14:40:00Z to 2026-11-27T14:50:00Z: the recorder was not running
no answer: n4:2222: dial: connection refused
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	if err := fh.Shortfall(); err == nil || err.Error() != "part of the asked span is not known: 1 node(s) did not answer, 1 gap(s) (listed above)" {
		t.Errorf("shortfall: %v", err)
	}

	b.Reset()
	if err := WriteHistory(&b, fh, true, false); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema    string
		Intervals []map[string]any
		Missing   []HistoryGap
		Problems  []HistoryProblem
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if doc.Schema != FleetHistorySchema || len(doc.Intervals) != 3 || doc.Intervals[1]["node"] != "n2:2222" || doc.Intervals[1]["open"] != true ||
		len(doc.Missing) != 1 || len(doc.Problems) != 1 {
		t.Errorf("json:\n%s", b.String())
	}

	b.Reset()
	empty := &FleetHistory{Schema: FleetHistorySchema, Intervals: []HistoryInterval{}, Missing: []HistoryGap{}, Problems: []HistoryProblem{}}
	if err := WriteHistory(&b, empty, false, true); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "\n(nothing held in the asked span)\n") || empty.Shortfall() != nil {
		t.Errorf("empty: %q, shortfall %v", b.String(), empty.Shortfall())
	}
}

// TestWriteHistoryNoAnswer: an empty answer says "nothing held" only of
// the nodes that answered: none answering is said as such, some not
// answering qualifies it, and Shortfall tells a node that gave nothing
// ("did not answer") from one that answered in part ("fully").
func TestWriteHistoryNoAnswer(t *testing.T) {
	refused := HistoryProblem{Node: "n1:2222", Error: "not listening (connection refused)"}
	begins := HistoryProblem{Node: "n2:2222", Error: "the record begins at 14:00", partial: true}
	cases := []struct {
		name      string
		asked     int
		problems  []HistoryProblem
		line, not string
		short     string
	}{
		{name: "none answered", asked: 1, problems: []HistoryProblem{refused},
			line: "(no node answered: what was held is not known)\n", not: "nothing held",
			short: "part of the asked span is not known: 1 node(s) did not answer, 0 gap(s) (listed above)"},
		{name: "one of two answered", asked: 2, problems: []HistoryProblem{refused},
			line:  "(nothing held in the asked span on the nodes that answered (1 of 2))\n",
			short: "1 node(s) did not answer, 0 gap(s)"},
		{name: "answered in part", asked: 2, problems: []HistoryProblem{begins},
			line: "(nothing held in the asked span)\n", not: "answered (",
			short: "1 node(s) did not answer fully, 0 gap(s)"},
		{name: "both kinds", asked: 3, problems: []HistoryProblem{refused, begins},
			line:  "(nothing held in the asked span on the nodes that answered (2 of 3))\n",
			short: "1 node(s) did not answer, 1 node(s) did not answer fully, 0 gap(s)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fh := &FleetHistory{Schema: FleetHistorySchema, Intervals: []HistoryInterval{}, Missing: []HistoryGap{}, Problems: c.problems, asked: c.asked}
			var b bytes.Buffer
			if err := WriteHistory(&b, fh, false, true); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "\n"+c.line) || (c.not != "" && strings.Contains(b.String(), c.not)) {
				t.Errorf("got:\n%s\nwant the line %q", b.String(), c.line)
			}
			if err := fh.Shortfall(); err == nil || !strings.Contains(err.Error(), c.short) {
				t.Errorf("shortfall %v, want %q", err, c.short)
			}
		})
	}
}

// TestRecordHistory: what a node answers `history --json` from its real
// record is what the fleet reads back (ParseNodeHistory): the kernel's
// hold on the device, its amount and span. A span that begins before the
// record is answered with the document and the record's words beside it;
// a directory with no record is an error naming the node's record.
func TestRecordHistory(t *testing.T) {
	dir := t.TempDir()
	rec, err := history.Open(history.Options{Dir: dir, FlushEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	held := model.MustDec("0.40")
	snap := func(seq uint64, kernel bool) *model.Snapshot {
		s := &model.Snapshot{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Minute), Node: "n1",
			Devices: []model.Device{{ID: "0", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.MustDec("1.00")}},
			Agents:  []model.Agent{{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"0"}}}}}
		if kernel {
			s.SetKernels([]*model.Kernel{{ID: "k0001", Agent: "a1", Slots: model.ResourceSlot{model.SlotCUDAShares: held},
				Alloc: model.Allocations{model.SlotCUDAShares: {"0": held}}}})
		}
		return s
	}
	for i, k := range []bool{false, true, true, false} {
		rec.Observe(snap(uint64(i+1), k))
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	doc, err := RecordHistory(dir, []string{"n1"}, history.Filter{Device: "cuda:0"})
	if err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	ivs, gaps, err := ParseNodeHistory("n1:2222", doc)
	if err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	if len(ivs) != 1 || len(gaps) != 0 {
		t.Fatalf("intervals %+v, gaps %+v:\n%s", ivs, gaps, doc)
	}
	iv := ivs[0]
	if iv.Node != "n1:2222" || iv.Kernel != "k0001" || iv.Device != "cuda:0" || iv.Amounts["cuda.shares"] != "0.40" ||
		iv.From != t0.Add(2*time.Minute).Format(time.RFC3339Nano) || iv.To != t0.Add(4*time.Minute).Format(time.RFC3339Nano) {
		t.Fatalf("%+v:\n%s", iv, doc)
	}

	doc, err = RecordHistory(dir, []string{"n1"}, history.Filter{Device: "cuda:0", Since: t0.Add(-time.Hour)})
	if err == nil || !strings.Contains(err.Error(), "the record begins at") || !bytes.Contains(doc, []byte(`"schema": "fgtop.history/v1"`)) {
		t.Fatalf("a span before the record: %v:\n%s", err, doc)
	}

	// Asked of node n2, whose --history is n1's directory: refused with
	// both names, not answered as n2's.
	if doc, err := RecordHistory(dir, []string{"n2"}, history.Filter{Device: "cuda:0"}); err == nil || len(doc) != 0 ||
		!strings.Contains(err.Error(), "of node n1") || !strings.Contains(err.Error(), "not of this node (n2)") {
		t.Errorf("another node's record: %v:\n%s", err, doc)
	}

	if _, err := RecordHistory(t.TempDir(), []string{"n1"}, history.Filter{Device: "cuda:0"}); err == nil || !strings.Contains(err.Error(), "the node's record") {
		t.Fatalf("no record: %v", err)
	}

	// Names as the console shows them, and a name that names nothing is
	// an error listing what the record knows, as fgtop history answers it
	// (over SSH it was an empty answer: "nothing held").
	doc, err = RecordHistory(dir, []string{"n1"}, history.Filter{Device: "GPU0"})
	if ivs, _, perr := ParseNodeHistory("n1:2222", doc); err != nil || perr != nil || len(ivs) != 1 {
		t.Fatalf("--device GPU0: %v %v:\n%s", err, perr, doc)
	}
	for _, f := range []history.Filter{{Device: "GPU9"}, {Kernel: "ffff"}} {
		doc, err := RecordHistory(dir, []string{"n1"}, f)
		if err == nil || !strings.Contains(err.Error(), "in the record, which knows") || len(doc) != 0 {
			t.Errorf("%+v: %v:\n%s", f, err, doc)
		}
	}
}

// TestRecordHistorySilentRecorder: a node whose recorder holds the
// directory but stopped writing long ago (SIGSTOP, a full disk) answers
// fleet history as its own `fgtop history` does: the stretch since its
// last write is missing, said beside the document, not held "open" up to
// now.
func TestRecordHistorySilentRecorder(t *testing.T) {
	dir := t.TempDir()
	rec, err := history.Open(history.Options{Dir: dir, FlushEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	// Written an hour ago, and nothing since: the recorder still holds
	// the directory.
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	held := model.MustDec("0.40")
	s := &model.Snapshot{Seq: 1, Time: t0, Node: "n1",
		Devices: []model.Device{{ID: "0", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.MustDec("1.00")}},
		Agents:  []model.Agent{{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"0"}}}}}
	s.SetKernels([]*model.Kernel{{ID: "k0001", Agent: "a1", Slots: model.ResourceSlot{model.SlotCUDAShares: held},
		Alloc: model.Allocations{model.SlotCUDAShares: {"0": held}}}})
	rec.Observe(s)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	doc, err := RecordHistory(dir, []string{"n1"}, history.Filter{Device: "cuda:0", Since: t0})
	if err == nil || !strings.Contains(err.Error(), history.NotWriting) && !strings.Contains(err.Error(), "lacks") {
		t.Fatalf("a silent recorder's record: %v:\n%s", err, doc)
	}
	if !bytes.Contains(doc, []byte("not writing")) {
		t.Errorf("the document names no missing stretch:\n%s", doc)
	}
}

// TestWriteHistoryCutsUUIDs: the fleet's table cuts kernel, session and
// user UUIDs as each node's own history table does, over all the nodes'
// rows (two kernels sharing their first 8 characters on two nodes keep
// more); --no-trunc (full) and the JSON keep them whole.
func TestWriteHistoryCutsUUIDs(t *testing.T) {
	const (
		k1 = "0ed801dc-6641-4599-b0ae-c15bbd8c2f16"
		k2 = "0ed801dc-7777-4599-b0ae-c15bbd8c2f16"
		u1 = "e4d8b849-c240-49da-8be2-180c49ebd54e"
	)
	row := func(node, kernel string) HistoryInterval {
		return HistoryInterval{Node: node, Interval: histtext.Interval{Device: "cuda:0", Kernel: kernel, Agent: "a0", User: u1,
			Amounts: map[string]string{"cuda.shares": "0.5"}, From: "2026-11-27T14:00:00Z", To: "2026-11-27T14:30:00Z"}}
	}
	fh := &FleetHistory{Schema: FleetHistorySchema, Intervals: []HistoryInterval{row("n1:2222", k1), row("n2:2222", k2)}}
	for _, c := range []struct {
		json, full bool
		want, gone []string
	}{
		{false, false, []string{k1[:10] + " ", k2[:10] + " ", u1[:8] + " "}, []string{k1, k2, u1}},
		{false, true, []string{k1, k2, u1}, nil},
		{true, false, []string{k1, k2, u1}, nil},
	} {
		var b bytes.Buffer
		if err := WriteHistory(&b, fh, c.json, c.full); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("json %v full %v: %q not in\n%s", c.json, c.full, w, b.String())
			}
		}
		for _, g := range c.gone {
			if strings.Contains(b.String(), g) {
				t.Errorf("json %v full %v: %q whole in\n%s", c.json, c.full, g, b.String())
			}
		}
	}
}
