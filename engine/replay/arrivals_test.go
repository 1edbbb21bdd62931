package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

func TestParseArrivals(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string // sessions as start>end agent request; or the error's words
		bad      bool
	}{
		{"csv with header", "start,end,agent,slots\n2026-11-23T03:00:00Z,2026-11-23T04:00:00Z,i-a,\"cuda.shares=0.8,cpu=8,mem=32g\"\n",
			"03:00>04:00 i-a cpu=8 cuda.shares=0.8 mem=32g", false},
		{"csv with a byte order mark (a spreadsheet's export)", "\ufeffstart,end,agent,slots\r\n2026-11-23T03:00:00Z,,,cuda.shares=0.5\r\n",
			"03:00>open - cuda.shares=0.5", false},
		{"semicolons, no agent, still running", "# exported\n2026-11-23T05:00:00Z,,,cuda.shares=0.5;cpu=2\n",
			"05:00>open - cpu=2 cuda.shares=0.5", false},
		{"json lines, sorted by start", `{"start": "2026-11-23T06:00:00Z", "end": "2026-11-23T07:00:00Z", "agent": "i-b", "slots": {"cuda.shares": "1.0"}}
{"start": "2026-11-23T01:00:00Z", "slots": "cpu=1"}
`, "01:00>open - cpu=1|06:00>07:00 i-b cuda.shares=1", false},
		// As the manager sends a request (from_user_input: quantized to
		// 0.001, normalised): the fraction's trailing zeros go, never
		// into an exponent (Python's normalize() says 10 as 1E+1).
		{"amounts as the manager sends them", "2026-11-23T03:00:00Z,,,\"cuda.shares=0.5000000,cpu=10.000,cuda.device=2\"\n",
			"03:00>open - cpu=10 cuda.device=2 cuda.shares=0.5", false},
		// A header of the same names in another order: said, and the
		// rows (read by place) not read at all.
		{"a header in another order", "end,start,agent,slots\n2026-11-23T04:00:00Z,2026-11-23T03:00:00Z,i-a,cpu=1\n",
			"line 1: the header is \"end,start,agent,slots\"; want start,end,agent,slots, in that order", true},
		{"a quoted header of other columns", "\"agent\",\"start\"\n", "line 1: the header is", true},
		{"a header of other names", "start_time,end_time,agent,slots\n", "line 1: the header is \"start_time,end_time,agent,slots\"", true},
		{"bad time", "2026-11-23 03:00,2026-11-23T04:00:00Z,i-a,cpu=1\n", "line 1: start \"2026-11-23 03:00\": want an RFC 3339 time", true},
		{"end before start", "start,end,agent,slots\n\n2026-11-23T04:00:00Z,2026-11-23T03:00:00Z,i-a,cpu=1\n", "line 3: end 2026-11-23T03:00:00Z is not after start", true},
		{"unquoted commas", "2026-11-23T03:00:00Z,,i-a,cpu=1,mem=2g\n", "line 1: 5 field(s); want start,end,agent,slots (quote slots that hold commas)", true},
		{"negative", "2026-11-23T03:00:00Z,,i-a,cpu=-1\n", "line 1: slots:", true},
		{"nothing asked", "2026-11-23T03:00:00Z,,i-a,cpu=0\n", "line 1: slots \"cpu=0\" ask for nothing", true},
		{"json unknown field", `{"start": "2026-11-23T03:00:00Z", "slot": "cpu=1"}` + "\n",
			`line 1: not a session object: unknown field "slot" (did you mean slots?); a session's fields are start, end, agent, slots`, true},
		// encoding/json's fields took "Start" too, and of two in one
		// object kept the last: a guess.
		{"json, a key in another case", `{"start": "2026-11-23T03:00:00Z", "Start": "2026-11-23T05:00:00Z", "slots": "cpu=1"}` + "\n",
			`line 1: not a session object: unknown field "Start" (did you mean start?)`, true},
		{"json, a time not a string", `{"start": 5, "slots": "cpu=1"}` + "\n", "line 1: start: 5 is not a string", true},
		{"json, slots a list", `{"start": "2026-11-23T03:00:00Z", "slots": ["cpu=1"]}` + "\n", `line 1: slots: a list, ["cpu=1"]; want an object`, true},
		{"json, an object not closed", `{"start": "2026-11-23T03:00:00Z", "slots": "cpu=1"` + "\n", "line 1: not a session object: it is not closed", true},
		// Read as CSV, it said "bare \" in non-quoted-field".
		{"a JSON array", `[{"start": "2026-11-23T03:00:00Z", "slots": "cpu=1"}]` + "\n", "line 1: a JSON array: want one session object a line", true},
		{"json lines, two objects on one", `{"start": "2026-11-23T03:00:00Z", "slots": "cpu=1"}{"start": "2026-11-23T04:00:00Z", "slots": "cpu=1"}` + "\n",
			"line 1: more after the session object, \"{\\\"start\\\": \\\"2026-11-23T04:00:00Z", true},
		{"json lines, trailing words", `{"start": "2026-11-23T03:00:00Z", "slots": "cpu=1"} garbage` + "\n", "line 1: more after the session object, \"garbage\"", true},
		{"json, a key twice", `{"start":"2026-11-23T06:00:00Z","start":"2026-11-23T08:00:00Z","slots":{"cuda.shares":"3"}}` + "\n",
			"line 1: \"start\" is given twice: which is meant is not known", true},
		{"json, a slot twice", `{"start":"2026-11-23T06:00:00Z","slots":{"cuda.shares":"3","cpu":"1","cuda.shares":"1"}}` + "\n",
			"line 1: \"cuda.shares\" is given twice", true},
		{"json, keys alike in two objects are no twice (slots are checked against the node later)", `{"start": "2026-11-23T06:00:00Z", "slots": {"start": "1", "cpu": "1"}}` + "\n",
			"06:00>open - cpu=1 start=1", false},
		{"empty", "# nothing\n", "the arrivals file lists no session", true},
		{"two bad lines", "x,,a,cpu=1\ny,,a,cpu=1\n", "line 1: start \"x\"", true},
		{"unclosed quote, by the file's line", "start,end,agent,slots\n2026-11-23T03:00:00Z,,i-a,\"cpu=1,mem=2g\n", "line 2: column ", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss, err := ParseArrivals([]byte(c.in), nil)
			if c.bad {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range ss {
				end := "open"
				if !s.Open {
					end = s.End.UTC().Format("15:04")
				}
				got = append(got, s.Start.UTC().Format("15:04")+">"+end+" "+orDash(string(s.Agent))+" "+Requested(s.Requested))
			}
			if g := strings.Join(got, "|"); g != c.want {
				t.Errorf("got %s\nwant %s", g, c.want)
			}
		})
	}
}

// TestArrivalsLongLineBounded: a row far longer than any session's (an
// amount of a million digits, within the file's 64 MiB) is refused by its
// line number without being read as a decimal, whose parse is quadratic
// in its length (a 50 MiB one ran for minutes, deaf to Ctrl-C), and the
// error does not say the row back; the rows around it are still judged.
func TestArrivalsLongLineBounded(t *testing.T) {
	for _, form := range []struct{ name, row string }{
		{"csv", "2026-11-23T03:00:00Z,,,cuda.shares=0.5" + strings.Repeat("0", 1<<20)},
		{"json", `{"start": "2026-11-23T03:00:00Z", "slots": {"cuda.shares": "0.5` + strings.Repeat("0", 1<<20) + `"}}`},
	} {
		t.Run(form.name, func(t *testing.T) {
			in := "2026-11-23T01:00:00Z,,,cpu=1\n" + form.row + "\nx,,,cpu=1\n"
			start := time.Now()
			_, err := ParseArrivals([]byte(in), nil)
			took := time.Since(start)
			if err == nil {
				t.Fatal("a row of a million digits was read")
			}
			msg := err.Error()
			if want := fmt.Sprintf("line 2: %d bytes, more than the %d a session's line may hold", len(form.row), MaxArrivalLine); !strings.Contains(msg, want) {
				t.Errorf("error %.300q, want %q", msg, want)
			}
			if !strings.Contains(msg, `line 3: start "x"`) {
				t.Errorf("the row after the long one was not judged: %.300q", msg)
			}
			if len(msg) > 1000 {
				t.Errorf("the error says %d bytes: the row back", len(msg))
			}
			if took > time.Second {
				t.Errorf("refusing the row took %s", took)
			}
		})
	}
}

// TestArrivalsWholeBytes: a mem amount that is not whole bytes is
// refused by its line, in plan's words, not rounded (0.3k was replayed as
// 307 bytes): nothing is guessed.
func TestArrivalsWholeBytes(t *testing.T) {
	for _, c := range []struct{ name, in, line, words string }{
		{"csv", "start,end,agent,slots\n2026-11-23T03:00:00Z,,,cpu=1\n2026-11-23T04:00:00Z,,,\"cpu=1,mem=0.3k\"\n",
			"line 3: slots: ", "mem=0.3k: 0.3k is not a whole number of bytes (307.2): write e.g. 120G or 96GiB"},
		{"json", `{"start": "2026-11-23T03:00:00Z", "slots": {"cpu": "1", "mem": "0.1m"}}` + "\n",
			"line 1: slots: ", "mem=0.1m: 0.1m is not a whole number of bytes (104857.6)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss, err := ParseArrivals([]byte(c.in), nil)
			if err == nil {
				t.Fatalf("accepted as %+v", ss)
			}
			if !strings.HasPrefix(err.Error(), c.line) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("error %q, want %q ... %q", err, c.line, c.words)
			}
		})
	}
}

// TestArrivalsSayTheAmountOnce: a bad amount is said once, after its
// line (it was said twice: slots: "cuda.shares=abc": cuda.shares=abc: ...).
func TestArrivalsSayTheAmountOnce(t *testing.T) {
	const header = "start,end,agent,slots\n"
	for _, c := range []struct{ name, in, want string }{
		{"alone", header + "2026-11-23T03:00:00Z,,,cuda.shares=abc\n",
			`line 2: slots: cuda.shares=abc: invalid decimal: "abc"`},
		{"beside others", header + "2026-11-23T03:00:00Z,,,\"cpu=1,cuda.shares=abc\"\n",
			`line 2: slots: cuda.shares=abc: invalid decimal: "abc"`},
		{"json", `{"start": "2026-11-23T03:00:00Z", "slots": {"cuda.shares": "NaN"}}` + "\n",
			`line 1: slots: cuda.shares=NaN: not a finite amount`},
		{"a fraction of a byte", header + "2026-11-23T03:00:00Z,,,mem=0.3k\n",
			`line 2: slots: mem=0.3k: 0.3k is not a whole number of bytes (307.2): write e.g. 120G or 96GiB`},
		// Not an amount's error: the slots are said, as they name what
		// is wrong.
		{"a slot twice", header + "2026-11-23T03:00:00Z,,,\"cpu=1,cpu=2\"\n",
			`line 2: slots: "cpu=1,cpu=2": slot cpu given twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseArrivals([]byte(c.in), nil)
			if err == nil || err.Error() != c.want {
				t.Fatalf("error %v\nwant  %s", err, c.want)
			}
		})
	}
}

func FuzzParseArrivals(f *testing.F) {
	f.Add([]byte("start,end,agent,slots\n2026-11-23T03:00:00Z,2026-11-23T04:00:00Z,i-a,\"cuda.shares=0.8,cpu=8,mem=32g\"\n"))
	f.Add([]byte(`{"start": "2026-11-23T06:00:00Z", "end": "2026-11-23T07:00:00Z", "agent": "i-b", "slots": {"cuda.shares": "1.0"}}` + "\n"))
	f.Add([]byte("2026-11-23T05:00:00Z,,,cuda.shares=0.5;cpu=2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		ss, err := ParseArrivals(data, nil)
		if err != nil {
			return
		}
		for i, s := range ss {
			if len(s.Requested) == 0 || !s.Open && !s.Start.Before(s.End) || i > 0 && s.Start.Before(ss[i-1].Start) {
				t.Fatalf("session %d accepted as %+v", i, s)
			}
			for slot, v := range s.Requested {
				if v.Sign() <= 0 {
					t.Fatalf("session %d asks %s %s", i, slot, v)
				}
			}
		}
	})
}

// TestArrivalsReplay: sessions from a file, on the scripted node under
// 2.0 each: a third 0.8 on i-node-a is refused; one naming no agent goes
// to the first that takes it.
func TestArrivalsReplay(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	ss, err := ParseArrivals([]byte(`start,end,agent,slots
2026-11-23T01:00:00Z,2026-11-23T10:00:00Z,i-node-a,cuda.shares=0.5
2026-11-23T02:00:00Z,2026-11-23T05:00:00Z,i-node-a,cuda.shares=1.0
2026-11-23T03:00:00Z,2026-11-23T04:00:00Z,i-node-a,cuda.shares=0.8
2026-11-23T03:30:00Z,,,cuda.shares=1.5
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	// A node that could not read its quantum_size is replayed with the
	// allocator's default, and says so.
	unk := ArrivalsRecord(ss, &model.Snapshot{Node: rec.Node, Devices: rec.Devices, Allocator: model.Allocator{Fractional: true}}, rec.Settings, given(rec, nil))
	if !slices.Contains(unk.Notes, QuantumNote) {
		t.Errorf("notes %q: want the quantum's", unk.Notes)
	}
	ar := ArrivalsRecord(ss, &model.Snapshot{Node: rec.Node, Devices: rec.Devices}, rec.Settings, given(rec, map[model.AgentID]string{agentA: "2.0", agentB: "2.0"}))
	if slices.Contains(ar.Notes, QuantumNote) {
		t.Errorf("notes %q: the quantum's without cause", ar.Notes)
	}
	res := Run(ar, ar.AsItWas(), Options{})
	if len(res.Refused) != 1 || res.Refused[0].Kernel != "line-4" || res.Refused[0].Agent != agentA {
		t.Fatalf("refused %+v", res.Refused)
	}
	if n := agentOf(t, res, agentB).Sessions; n != 1 {
		t.Errorf("the session naming no agent: b has %d session(s), want 1 (a holds 1.5 of 2.0 then)", n)
	}
	// b's mean use is over the span (01:00 to 10:00), not from its one
	// session's arrival at 03:30: 1.5 for 6.5 h of 2.0 for 9 h is 0.54
	// (0.75 when counted from 03:30).
	if !ar.From.Equal(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)) || !ar.To.Equal(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("span %v to %v", ar.From, ar.To)
	}
	if st := slotOf(t, agentOf(t, res, agentB), model.SlotCUDAShares); st.MeanUse.V.String() != "0.54" || st.Varies {
		t.Errorf("b's cuda.shares %+v, want a mean use of 0.54", st)
	}
	for _, n := range ar.Notes {
		if strings.Contains(n, "lists no") {
			t.Errorf("the node lists its GPUs, yet: %q", n)
		}
	}
	// The session with no end runs to 10:00 and no later, and the note
	// says so; one starting at the file's last time counts for none.
	const openNote = "1 session(s) with no end run to the file's last start or end (2026-11-23 10:00:00 UTC) and no later"
	if !slices.ContainsFunc(ar.Notes, func(n string) bool { return strings.HasPrefix(n, openNote) && !strings.Contains(n, "count for none") }) {
		t.Errorf("notes %q: want %q", ar.Notes, openNote)
	}
	late, err := ParseArrivals([]byte("2026-11-23T01:00:00Z,2026-11-23T02:00:00Z,,cuda.shares=0.5\n2026-11-23T02:00:00Z,,,cuda.shares=0.5\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	lr := ArrivalsRecord(late, &model.Snapshot{Node: rec.Node, Devices: rec.Devices}, rec.Settings, given(rec, nil))
	if !slices.ContainsFunc(lr.Notes, func(n string) bool { return strings.HasSuffix(n, "(1 of them start at that time and count for none)") }) {
		t.Errorf("notes %q: want the session counting for no time said", lr.Notes)
	}
	// A node given without its GPUs (plan with no --devices) judges
	// their shares by the amounts alone, and says so.
	var host []model.Device
	for _, d := range rec.Devices {
		if d.Name != "cuda" {
			host = append(host, d)
		}
	}
	ar = ArrivalsRecord(ss, &model.Snapshot{Node: rec.Node, Devices: host}, rec.Settings, given(rec, nil))
	if !slices.ContainsFunc(ar.Notes, func(n string) bool {
		return strings.HasPrefix(n, "the node as given lists no cuda devices (give them with --devices")
	}) {
		t.Errorf("notes %q", ar.Notes)
	}
}

// TestAgentlessNote: a record's sessions that name no agent on a node of
// several are said to be routed by a guess; on a node of one agent, or
// with every agent known, nothing is said.
func TestAgentlessNote(t *testing.T) {
	two := []Epoch{{Agents: []model.Agent{{ID: "a"}, {ID: "b"}}}}
	one := []Epoch{{Agents: []model.Agent{{ID: "a"}}}}
	ss := []Session{{Kernel: "k1", Agent: "a"}, {Kernel: "k2"}, {Kernel: "k3"}}
	if n := agentlessNote(&Record{Epochs: two, Sessions: ss}); !strings.HasPrefix(n, "2 session(s) of the record name no agent (no recovery.json said whose they were, or theirs named an agent agent.toml does not give their scratch root; the first: k2)") {
		t.Errorf("two agents: %q", n)
	}
	if n := agentlessNote(&Record{Epochs: one, Sessions: ss}); n != "" {
		t.Errorf("one agent: %q", n)
	}
	if n := agentlessNote(&Record{Epochs: two, Sessions: ss[:1]}); n != "" {
		t.Errorf("every agent known: %q", n)
	}
}

// TestArrivalsNoTakerIsNoAgentsDemand: sessions of a file that name no
// agent and that no agent takes are refused under the first agent, but
// their demand is counted on none: they were never its sessions (its
// peak read 6.4 on an amount of 2.0, from two such sessions).
func TestArrivalsNoTakerIsNoAgentsDemand(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	ss, err := ParseArrivals([]byte(`start,end,agent,slots
2026-11-23T01:00:00Z,2026-11-23T05:00:00Z,,cuda.shares=1.8
2026-11-23T01:10:00Z,2026-11-23T05:00:00Z,,cuda.shares=0.5
2026-11-23T01:20:00Z,2026-11-23T05:00:00Z,,cuda.shares=3.0
2026-11-23T01:30:00Z,2026-11-23T05:00:00Z,,cuda.shares=1.6
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ar := ArrivalsRecord(ss, &model.Snapshot{Node: rec.Node, Devices: rec.Devices}, rec.Settings, given(rec, map[model.AgentID]string{agentA: "2.0", agentB: "2.0"}))
	res := Run(ar, ar.AsItWas(), Options{})
	if len(res.Refused) != 2 || res.Refused[0].Kernel != "line-4" || res.Refused[1].Kernel != "line-5" {
		t.Fatalf("refused %+v", res.Refused)
	}
	if st := slotOf(t, agentOf(t, res, agentA), model.SlotCUDAShares); st.Peak.String() != "1.8" || st.Over != 0 {
		t.Errorf("a's cuda.shares %+v: want the peak of its own session, 1.8, never over", st)
	}
	if st := slotOf(t, agentOf(t, res, agentB), model.SlotCUDAShares); st.Peak.String() != "0.5" {
		t.Errorf("b's cuda.shares %+v", st)
	}
}

// TestSuggestQuantum: the suggestion steps shares by the node's quantum,
// else its record's, and refuses where neither knows it.
func TestSuggestQuantum(t *testing.T) {
	known := &Record{}
	known.Settings.Quantum = model.MustDec("0.25")
	for _, tc := range []struct {
		live model.Allocator
		rec  *Record
		want string
	}{
		{model.Allocator{Fractional: true, Quantum: model.MustDec("0.05")}, known, "0.05"},
		{model.Allocator{}, nil, "0"},
		{model.Allocator{Fractional: true}, known, "0.25"},
		{model.Allocator{Fractional: true}, &Record{}, "unknown"},
		{model.Allocator{Fractional: true}, nil, "unknown"},
	} {
		q, err := SuggestQuantum(tc.live, tc.rec)
		got := q.String()
		if errors.Is(err, ErrQuantumUnknown) {
			got = "unknown"
		} else if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("live %+v: %s, want %s", tc.live, got, tc.want)
		}
	}
}

// TestCheckArrivalsAgentTypo: an agent the node lacks is told as the typo
// it most likely is, as a misspelt slot is ("did you mean"), with the
// node's agents; a name like none of them gets the list alone.
func TestCheckArrivalsAgentTypo(t *testing.T) {
	agents := []model.AgentID{"i-gpu-node01-numa0", "i-gpu-node01-numa1"}
	ss := []Session{{Kernel: "line-2", Agent: "i-gpu-node01-nmua1", Requested: model.ResourceSlot{model.SlotCPU: model.MustDec("1")}},
		{Kernel: "line-3", Agent: "i-other", Requested: model.ResourceSlot{model.SlotCPU: model.MustDec("1")}}}
	err := CheckArrivals(ss, []model.SlotName{model.SlotCPU}, agents)
	for _, want := range []string{
		`line 2: agent "i-gpu-node01-nmua1" is not one of this node's: did you mean i-gpu-node01-numa1? (i-gpu-node01-numa0, i-gpu-node01-numa1)`,
		`line 3: agent "i-other" is not one of this node's (i-gpu-node01-numa0, i-gpu-node01-numa1)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
