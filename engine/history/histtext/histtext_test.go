package histtext

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// The table written in one buffer is the tabwriter's, byte for byte, and
// gives way to it where a cell holds a byte the tabwriter treats
// specially.
func TestHistoryTableMatchesTabwriter(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 3, 4, 5, 0, time.UTC)
	var ivs []history.Interval
	for i := range 40 {
		iv := history.Interval{Device: model.DeviceKey{Name: "cuda", ID: model.DeviceID(fmt.Sprint(i % 11))},
			Kernel: model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7919)), Agent: model.AgentID(fmt.Sprintf("i-node%0*d", 1+i%5, i)),
			Amounts: model.ResourceSlot{model.SlotCUDAShares: model.NewDec(int64(1+i), -1)},
			From:    t0.Add(time.Duration(i) * time.Minute), To: t0.Add(time.Duration(i*i) * time.Minute)}
		switch i % 5 {
		case 0:
			iv.Since = true
		case 1:
			iv.Open = true
		case 2:
			iv.Gone = true
			iv.Amounts["cuda.mem"] = model.NewDec(int64(i)<<30, 0)
		case 3:
			iv.Session, iv.User = fmt.Sprintf("sess-%d", i), "ü-user-ß"
		}
		ivs = append(ivs, iv)
	}
	for _, n := range []int{0, 1, 2, len(ivs)} {
		for _, cut := range [][3]int{{}, Abbrev(ivs[:n])} {
			var tabs bytes.Buffer
			writeTabs(&tabs, ivs[:n], cut)
			for _, parts := range []int{1, 2, 3} {
				var fast bytes.Buffer
				if !writeParts(&fast, ivs[:n], parts, cut) {
					t.Fatalf("%d intervals: the table gave way", n)
				}
				if fast.String() != tabs.String() {
					t.Fatalf("%d intervals in %d parts, cut %v:\n%s\ntabwriter:\n%s", n, parts, cut, fast.String(), tabs.String())
				}
			}
		}
	}
	for _, at := range []int{0, 7, len(ivs) - 1} {
		odd := append([]history.Interval(nil), ivs...)
		odd[at].Agent = "a\tb"
		for _, parts := range []int{1, 3} {
			var fast bytes.Buffer
			if writeParts(&fast, odd, parts, Abbrev(odd)) || fast.Len() != 0 {
				t.Fatalf("a tab in a cell of line %d (%d parts) did not give way to the tabwriter", at, parts)
			}
		}
	}
}

// Write says what the answer lacks: the asked span outside the record,
// the stretches the record lacks in it (listed after the table, or in
// the document), and an empty answer in words.
func TestWrite(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	iv := history.Interval{Device: model.DeviceKey{Name: "cuda", ID: "1"}, Kernel: "k1", Agent: "i-a", User: "u1",
		Amounts: model.ResourceSlot{model.SlotCUDAShares: model.NewDec(5, -1)}, From: t0, To: t0.Add(time.Hour)}
	gap := history.Missing{From: t0.Add(20 * time.Minute), To: t0.Add(30 * time.Minute), Why: "nothing recorded"}
	mem := history.Interval{Device: model.DeviceKey{Name: "mem", ID: "root"}, Kernel: "k2", Agent: "i-a",
		Amounts: model.ResourceSlot{model.SlotMem: model.NewDec(16<<30, 0)}, From: t0, To: t0.Add(time.Hour)}
	res := func(ivs []history.Interval, ms ...history.Missing) *history.HistoryResult {
		return &history.HistoryResult{Intervals: ivs, Missing: ms, From: t0, To: t0.Add(2 * time.Hour)}
	}
	for _, c := range []struct {
		name     string
		res      *history.HistoryResult
		f        history.Filter
		o        Options
		out      []string
		not      string
		problems []string
	}{
		{name: "table", res: res([]history.Interval{iv}), out: []string{"FROM", "cuda:1", "cuda.shares=0.5", "k1", "u1", "i-a"}},
		{name: "nothing", res: res(nil), out: []string{"(nothing held in the asked span)"}},
		// Who held it at a moment the recorder was killed: not known, not
		// "nothing held".
		{name: "nothing, the span inside a gap", res: res(nil, gap), f: history.Filter{Since: t0.Add(22 * time.Minute), Until: t0.Add(25 * time.Minute)},
			out: []string{"(the record lacks all of the asked span, listed below: what was held then is not known)", "missing: "}, not: "nothing held",
			problems: []string{"the record lacks 1 stretch(es)"}},
		{name: "nothing, a gap in the span", res: res(nil, gap), f: history.Filter{Since: t0.Add(10 * time.Minute), Until: t0.Add(25 * time.Minute)},
			out:      []string{"(nothing held in what the record has of the asked span; what was held in the stretches it lacks, listed below, is not known)"},
			problems: []string{"the record lacks 1 stretch(es)"}},
		{name: "a gap in the span", res: res([]history.Interval{iv}, gap), out: []string{"missing: "},
			problems: []string{"the record lacks 1 stretch(es) of the asked span (listed above)"}},
		{name: "a gap outside the span", res: res([]history.Interval{iv}, gap), f: history.Filter{Since: t0.Add(time.Hour)}},
		{name: "after the record", res: res(nil), f: history.Filter{Since: t0.Add(3 * time.Hour)},
			problems: []string{"the asked span is outside the record, which covers " + t0.Local().Format("2006-01-02 15:04:05 MST") + " to "}},
		{name: "after the record, still written", res: res(nil), f: history.Filter{Since: t0.Add(3 * time.Hour)}, o: Options{Active: true}},
		{name: "before the record", res: res(nil), f: history.Filter{Since: t0.Add(-time.Hour)},
			out:      []string{"missing: " + t0.Add(-time.Hour).Local().Format("2006-01-02 15:04:05 MST") + " to " + t0.Local().Format("2006-01-02 15:04:05 MST") + ": before the record begins"},
			problems: []string{"the record begins at " + t0.Local().Format("2006-01-02 15:04:05 MST") + ", after --since"}},
		{name: "before the record and a gap, json", res: res([]history.Interval{iv}, gap), f: history.Filter{Since: t0.Add(-time.Hour)}, o: Options{JSON: true},
			out: []string{`"why": "before the record begins: no recorder wrote then"`, `"why": "nothing recorded"`},
			problems: []string{"the record begins at " + t0.Local().Format("2006-01-02 15:04:05 MST") + ", after --since",
				"the record lacks 1 stretch(es)"}},
		{name: "cut to the span, json", res: &history.HistoryResult{Intervals: []history.Interval{iv}, From: t0, To: t0.Add(2 * time.Hour),
			RecordTo: t0.Add(48 * time.Hour), More: true}, f: history.Filter{Since: t0.Add(10 * time.Minute), Until: t0.Add(15 * time.Minute)}, o: Options{JSON: true},
			out: []string{`"record_to": "2026-11-22T03:00:00Z"`, `"from": "2026-11-20T03:10:00Z"`, `"to": "2026-11-20T03:15:00Z"`,
				`"since_before_from": true`, `"open": true`}},
		{name: "cut to the span", res: res([]history.Interval{iv}), f: history.Filter{Until: t0.Add(15 * time.Minute)},
			out: []string{t0.Local().Format("2006-01-02 15:04:05") + "  open"}},
		{name: "a lost tail, json", res: res([]history.Interval{iv}, history.Missing{From: t0.Add(40 * time.Minute), To: t0.Add(40 * time.Minute), Why: "segment x: checksum at byte 5; the rest of it is lost"}),
			f: history.Filter{Until: t0.Add(90 * time.Minute)}, o: Options{JSON: true, Active: true},
			out:      []string{`"from": "2026-11-20T03:40:00Z",` + "\n" + `      "to": "2026-11-20T04:30:00Z",`, `"open_ended": true`},
			problems: []string{"the record lacks 1 stretch(es)"}},
		// Memory as the console prints it (as MEM_SHARES writes it), not
		// 17179869184; --json keeps the bytes.
		{name: "memory in binary units", res: res([]history.Interval{mem}), out: []string{"mem:root", "mem=16g  k2"}, not: "17179869184"},
		{name: "memory in bytes, json", res: res([]history.Interval{mem}), o: Options{JSON: true}, out: []string{`"mem": "17179869184"`}, not: `"16g"`},
		{name: "json", res: res([]history.Interval{iv}, gap), o: Options{JSON: true},
			out:      []string{`"schema": "fgtop.history/v1"`, `"owner_user_id": "u1"`, `"cuda.shares": "0.5"`, `"why": "nothing recorded"`},
			problems: []string{"the record lacks 1 stretch(es)"}},
	} {
		var b bytes.Buffer
		problems, err := Write(&b, c.res, c.f, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.out {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, b.String())
			}
		}
		if c.not != "" && strings.Contains(b.String(), c.not) {
			t.Errorf("%s: %q in\n%s", c.name, c.not, b.String())
		}
		if len(problems) != len(c.problems) {
			t.Errorf("%s: problems %q, want %q", c.name, problems, c.problems)
			continue
		}
		for i, w := range c.problems {
			if !strings.Contains(problems[i], w) {
				t.Errorf("%s: problem %q, want %q", c.name, problems[i], w)
			}
		}
	}
}

// TestSpanPastTheRecordsEnd: a span that runs on past the end of a record
// no recorder writes to any more lacks its last stretch (exit 1, as
// snapshot --at says of a moment there), with --until or with --since
// alone (to now); not while a recorder writes, not for the whole record,
// and not where the part read ends at a gap the record goes on after.
func TestSpanPastTheRecordsEnd(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	end := t0.Add(10 * time.Minute)
	res := func() *history.HistoryResult {
		return &history.HistoryResult{From: t0, To: end, Intervals: []history.Interval{{Device: model.DeviceKey{Name: "cuda", ID: "1"},
			Kernel: "k1", Amounts: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5")}, From: t0, To: end, Open: true}}}
	}
	gap := res()
	gap.Missing = []history.Missing{{From: end, To: end.Add(time.Hour), Why: "not recorded: no recorder was running"}}
	gap.More = true // the walk stopped at --until: the record goes on after the gap
	short := res()
	short.More = true // a restart too quick to list: the record goes on
	tests := []struct {
		name string
		res  *history.HistoryResult
		f    history.Filter
		o    Options
		lack bool
	}{
		{"--until past the end", res(), history.Filter{Since: t0, Until: end.Add(time.Minute)}, Options{}, true},
		{"--since alone, now past the end", res(), history.Filter{Since: t0}, Options{Now: end.Add(time.Minute)}, true},
		{"a recorder writes", res(), history.Filter{Since: t0, Until: end.Add(time.Minute)}, Options{Active: true}, false},
		{"the whole record", res(), history.Filter{}, Options{Now: end.Add(time.Minute)}, false},
		{"the whole record, a recorder writes", res(), history.Filter{}, Options{Now: end.Add(time.Minute), Active: true}, false},
		{"--until at the end", res(), history.Filter{Since: t0, Until: end}, Options{}, false},
		{"a gap after the part read", gap, history.Filter{Since: t0, Until: end.Add(time.Minute)}, Options{}, true},
		{"the record goes on after a quick restart", short, history.Filter{Since: t0, Until: end.Add(time.Second)}, Options{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			problems, err := Write(&b, tt.res, tt.f, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			lacks := len(problems) > 0
			ends := strings.Contains(b.String(), "the record ends here")
			if lacks != tt.lack {
				t.Errorf("problems %q, want some: %v\n%s", problems, tt.lack, b.String())
			}
			if ends != (tt.lack && tt.res != gap) {
				t.Errorf("says the record ends: %v\n%s", ends, b.String())
			}
			// The whole record, no recorder: nothing missing, but its
			// "open" rows are said to be of the record's end, not now.
			noted := strings.Contains(b.String(), `note: the record ends at `+stamp(end)+` and no recorder writes to it now: a TO of "open" was held then`)
			if want := tt.name == "the whole record"; noted != want {
				t.Errorf("notes the record's end: %v, want %v\n%s", noted, want, b.String())
			}
		})
	}
}

// TestSilentRecorder: a recorder that holds the directory but has written
// nothing for longer than its heartbeat allows (SIGSTOP, a full disk) is
// not writing: a span running past its last write lacks that stretch and
// the whole record's "open" rows are said to be of its end, as snapshot
// --at says of a moment there; one that wrote within the beat is not.
func TestSilentRecorder(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 19, 10, 0, 0, time.UTC)
	end := t0.Add(3 * time.Minute)
	res := func() *history.HistoryResult {
		return &history.HistoryResult{From: t0, To: end, Intervals: []history.Interval{{Device: model.DeviceKey{Name: "cuda", ID: "1"},
			Kernel: "k1", Amounts: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5")}, From: t0, To: end, Open: true}}}
	}
	for _, tt := range []struct {
		name       string
		f          history.Filter
		now        time.Time
		lack, note bool
	}{
		{"--since alone, silent a minute", history.Filter{Since: t0}, end.Add(time.Minute), true, false},
		{"--until past the last write, silent", history.Filter{Since: t0, Until: end.Add(30 * time.Second)}, end.Add(time.Minute), true, false},
		{"the whole record, silent", history.Filter{}, end.Add(time.Minute), false, true},
		{"--since alone, written within the beat", history.Filter{Since: t0}, end.Add(5 * time.Second), false, false},
		{"the whole record, written within the beat", history.Filter{}, end.Add(5 * time.Second), false, false},
		{"--until before the last write", history.Filter{Since: t0, Until: end.Add(-time.Minute)}, end.Add(time.Minute), false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				var b bytes.Buffer
				problems, err := Write(&b, res(), tt.f, Options{Active: true, Now: tt.now, JSON: asJSON})
				if err != nil {
					t.Fatal(err)
				}
				says := strings.Contains(b.String(), history.NotWriting)
				if (len(problems) > 0) != tt.lack || says != (tt.lack || tt.note && !asJSON) {
					t.Errorf("json %v: problems %q (want some: %v), says the recorder is not writing: %v\n%s", asJSON, problems, tt.lack, says, b.String())
				}
			}
		})
	}
}

// The table cuts a column's UUIDs to the fewest first characters (8 at
// least) that tell them apart; ids that are not UUIDs, and --no-trunc's
// table and the JSON, are whole.
func TestAbbrev(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	iv := func(kernel, session, user string) history.Interval {
		return history.Interval{Device: model.DeviceKey{Name: "cuda", ID: "0"}, Kernel: model.KernelID(kernel), Session: session, User: user,
			Agent: "i-a", Amounts: model.ResourceSlot{model.SlotCUDAShares: model.NewDec(5, -1)}, From: t0, To: t0.Add(time.Hour)}
	}
	const (
		k1 = "0ed801dc-6641-4599-b0ae-c15bbd8c2f16"
		k2 = "0ed801dc-6699-4599-b0ae-c15bbd8c2f16" // the same first 11 characters as k1
		k3 = "89a181c6-262a-46db-acc0-d42d596abbe7"
		s1 = "8e8c61d7-2ee2-42d0-8119-4dfd9113fe78"
		u1 = "E4D8B849-C240-49DA-8BE2-180C49EBD54E"
	)
	for _, c := range []struct {
		name string
		ivs  []history.Interval
		want [3]int
	}{
		{"none", nil, [3]int{8, 8, 8}},
		{"distinct at 8", []history.Interval{iv(k1, s1, u1), iv(k3, s1, u1)}, [3]int{8, 8, 8}},
		{"a shared prefix", []history.Interval{iv(k1, s1, u1), iv(k2, s1, u1), iv(k3, "", "")}, [3]int{12, 8, 8}},
		{"the same id twice", []history.Interval{iv(k1, s1, u1), iv(k1, s1, u1)}, [3]int{8, 8, 8}},
		{"not UUIDs", []history.Interval{iv("k-0ed801dc-6641-4599", "s-0ed801dc-6641", "u1"), iv("k-0ed801dc-6641-4598", "s-0ed801dc-6642", "u2")}, [3]int{8, 8, 8}},
		// An id that is no UUID is shown whole: where it is what a UUID
		// of its column would be cut to, the UUID is cut longer, or the
		// two read as one kernel.
		{"an id that is a UUID's prefix", []history.Interval{iv(k1, s1, u1), iv(k1[:8], s1[:11], u1[:8]), iv(k3, "", "")}, [3]int{9, 8, 9}},
		{"an id that is a UUID's prefix past the cut", []history.Interval{iv(k1, s1, u1), iv(k2, s1, u1), iv(k1[:12], "", "")}, [3]int{13, 8, 8}},
	} {
		if got := Abbrev(c.ivs); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	ivs := []history.Interval{iv(k1, s1, u1), iv(k2, s1, u1), iv("k-not-a-uuid", "-", "")}
	const d1 = "5e3d9a41-02c7-4f1b-9d86-0c1a2b3ca104"
	ivs[1].Device.ID = d1
	for _, o := range []Options{{}, {Full: true}, {JSON: true}} {
		var b bytes.Buffer
		if _, err := Write(&b, &history.HistoryResult{From: t0, To: t0.Add(time.Hour), Intervals: ivs}, history.Filter{}, o); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		whole := o.Full || o.JSON
		for _, id := range []string{k1, k2, s1, u1} {
			if strings.Contains(out, id) != whole {
				t.Errorf("%+v: %s whole in the output: %v, want %v\n%s", o, id, !whole, whole, out)
			}
		}
		if !whole {
			for _, short := range []string{k1[:12] + " ", k2[:12] + " ", s1[:8] + " ", u1[:8] + " ", "k-not-a-uuid", "cuda:" + d1 + " ", "cuda:0 "} {
				if !strings.Contains(out, short) {
					t.Errorf("%q not in the table:\n%s", short, out)
				}
			}
			if w := maxWidth(out); w > 150 {
				t.Errorf("the table is %d columns wide:\n%s", w, out)
			}
		}
	}
}

func maxWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, len(l))
	}
	return w
}

// TestKernelStayAndGaps: asked of a kernel (--kernel, no span), a
// stretch the record lacks outside the kernel's stay hides nothing of it:
// not listed, not a problem (exit 0). One inside its stay, one it ended
// in ("?") or one it may have begun in ("<" after it) still is, and so is
// one after the record's end when the kernel was held then ("open").
func TestKernelStayAndGaps(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	dev := model.DeviceKey{Name: "cuda", ID: "1"}
	am := model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5")}
	gap := history.Missing{From: at(6), To: at(37), Why: "not recorded: no recorder was running"}
	tests := []struct {
		name string
		iv   history.Interval
		f    history.Filter
		lack bool
	}{
		{"ended before the gap", history.Interval{From: at(1), To: at(4), Since: true}, history.Filter{Kernel: "k"}, false},
		{"began after the gap", history.Interval{From: at(39), To: at(43)}, history.Filter{Kernel: "k"}, false},
		{"held across the gap", history.Interval{From: at(1), To: at(44), Open: true}, history.Filter{Kernel: "k"}, true},
		{"ended in the gap", history.Interval{From: at(1), To: at(6), Gone: true}, history.Filter{Kernel: "k"}, true},
		{"held when the record began again", history.Interval{From: at(37), To: at(43), Since: true}, history.Filter{Kernel: "k"}, true},
		{"after the gap, asked of the device", history.Interval{From: at(39), To: at(43)}, history.Filter{Device: "cuda:1"}, true},
	}
	for _, tt := range tests {
		for _, js := range []bool{false, true} {
			iv := tt.iv
			iv.Device, iv.Kernel, iv.Amounts = dev, "k", am
			res := &history.HistoryResult{From: at(1), To: at(44), Intervals: []history.Interval{iv}, Missing: []history.Missing{gap}}
			var b bytes.Buffer
			problems, err := Write(&b, res, tt.f, Options{JSON: js, Now: at(44)})
			if err != nil {
				t.Fatal(err)
			}
			listed := strings.Contains(b.String(), "no recorder was running")
			if lacks := len(problems) > 0; lacks != tt.lack || listed != tt.lack {
				t.Errorf("%s (json %v): problems %q, gap listed %v; want both %v\n%s", tt.name, js, problems, listed, tt.lack, b.String())
			}
		}
	}
}
