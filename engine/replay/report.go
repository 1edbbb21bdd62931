package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// Schema is the JSON document's schema name.
const Schema = "fgtop.replay/v1"

// Routing says how sessions are routed, in every output.
const Routing = "each session goes to the agent that ran it (what the manager did), one naming none (an arrivals file, or a kernel whose agent the record never learnt) to the first agent that takes it; a refused one says which other agents would have taken it then"

// Doc is the fgtop.replay/v1 document.
type Doc struct {
	Schema   string    `json:"schema"`
	Node     string    `json:"node"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Routing  string    `json:"routing"`
	Sessions int       `json:"sessions"`
	// Before counts the sessions already running when the span began
	// (placed first).
	Before int `json:"running_at_start"`
	// Proposal: the proposal was replayed (false: only the partition in
	// force, the fidelity check).
	Proposal bool `json:"proposal"`
	// Arrivals: the sessions came from an arrivals file, not a record:
	// there is no "as it was" to check the rules against.
	Arrivals bool `json:"arrivals,omitempty"`
	// Refused and Agents are the proposal's (or, without one, the
	// partition in force's).
	Refused []RefusalDoc `json:"refused"`
	Agents  []AgentDoc   `json:"agents"`
	AsItWas AsItWasDoc   `json:"as_it_was"`
	Missing []MissingDoc `json:"missing"`
	Notes   []string     `json:"notes"`
	// ServesAll: every session the record saw run would have started.
	ServesAll bool `json:"serves_all"`
	// Suggested are the amounts --suggest found, per agent and slot.
	Suggested map[model.AgentID]map[model.SlotName]string `json:"suggested,omitempty"`
	// SuggestedKept are the slots the suggestion left at today's
	// amounts: the record cannot tell their demand (Suggestion.Kept).
	SuggestedKept []model.SlotName `json:"suggested_kept,omitempty"`
	// SuggestedUnsized are the slots the suggestion left at today's
	// amounts because the node's devices of them were not given
	// (Suggestion.Unsized).
	SuggestedUnsized []model.SlotName `json:"suggested_unsized,omitempty"`
	// SuggestedEmpty are the slots it left at today's amounts because the
	// node, as given, leaves none of them after the reserved amounts.
	SuggestedEmpty []model.SlotName `json:"suggested_empty,omitempty"`
	// SuggestedOverheld says why the suggestion raises amounts whose
	// agent's recorded kernels held more than it was given though they
	// ran (Suggestion.OverheldWords).
	SuggestedOverheld string `json:"suggested_overheld,omitempty"`
}

// RefusalDoc is one refused session.
type RefusalDoc struct {
	Kernel     model.KernelID     `json:"kernel"`
	Session    string             `json:"session"`
	Owner      string             `json:"owner"`
	Agent      model.AgentID      `json:"agent"`
	At         time.Time          `json:"at"`
	Requested  model.ResourceSlot `json:"requested"`
	Kind       string             `json:"kind"`
	Reason     string             `json:"reason"`
	CouldRunOn []model.AgentID    `json:"could_run_on"`
	// Before: it was already running when the span began.
	Before bool `json:"running_at_start"`
}

// AgentDoc is one agent's lines.
type AgentDoc struct {
	Agent    model.AgentID `json:"agent"`
	Sessions int           `json:"sessions"`
	Refused  int           `json:"refused"`
	// RefusedRan counts, in the fidelity run (no proposal), the agent's
	// sessions the rules would have refused though they ran: Refused is
	// 0 there, since every session runs where it really ran.
	RefusedRan int `json:"refused_though_ran"`
	// Absent: the partition has no such agent; its sessions are refused.
	Absent  bool      `json:"absent"`
	Slots   []SlotDoc `json:"slots"`
	Verdict string    `json:"verdict"`
}

// SlotDoc is one slot of one agent.
type SlotDoc struct {
	Slot   model.SlotName `json:"slot"`
	Amount model.Dec      `json:"amount"`
	// Given: the amount is the partition's; otherwise what the agent's
	// devices hold.
	Given  bool      `json:"given"`
	Varies bool      `json:"varies,omitempty"`
	Peak   model.Dec `json:"peak"`
	PeakAt time.Time `json:"peak_at"`
	// OverSeconds is how long the demand exceeded the amount.
	OverSeconds float64 `json:"over_seconds"`
	// MeanUse is the mean share of the amount in use (null: no amount).
	MeanUse *model.Dec `json:"mean_use"`
}

// AsItWasDoc is the fidelity check: the partition in force replayed.
type AsItWasDoc struct {
	Refused int `json:"refused"`
	// Compared counts the sessions whose placement was compared with
	// where they really ran.
	Compared      int               `json:"placements_compared"`
	Disagreements []DisagreementDoc `json:"disagreements"`
}

// DisagreementDoc is one session the record and the rules disagree on.
type DisagreementDoc struct {
	Kernel  model.KernelID    `json:"kernel"`
	Agent   model.AgentID     `json:"agent"`
	At      time.Time         `json:"at"`
	Refused string            `json:"refused,omitempty"`
	Got     model.Allocations `json:"got"`
	Placed  model.Allocations `json:"placed,omitempty"`
	// held is Got as the record keeps it, where Got is nil: made into
	// maps only where written (got), not for each of a busy week's
	// 200,000 when the text shows twenty.
	held history.Held
}

// got is where it ran.
func (g *DisagreementDoc) got() model.Allocations {
	if g.Got != nil || g.held.IsZero() {
		return g.Got
	}
	return g.held.Map()
}

// MarshalJSON writes g with Got made of what the record keeps.
func (g DisagreementDoc) MarshalJSON() ([]byte, error) {
	type plain DisagreementDoc
	p := plain(g)
	p.Got = g.got()
	return json.Marshal(p)
}

// MissingDoc is a gap of the record.
type MissingDoc struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Why  string    `json:"why"`
	// Hides says what the gap may hide.
	Hides string `json:"hides"`
}

// GapHides is what a gap of the record may hide from a replay.
const GapHides = "sessions that began and ended inside it are not replayed; one running across it is taken as running throughout; one seen before it and not after left sometime in it, and is taken as leaving as it began; one first seen after it arrived sometime in it"

// NewDoc makes the document of a replay: asWas is the fidelity run, prop
// the proposal's (nil without one).
func NewDoc(rec *Record, asWas, prop *Result) *Doc { return newDoc(rec, asWas, prop, false) }

// newDoc is NewDoc; with arrivals, asWas is the run of an arrivals
// file's sessions under today's partition (not a fidelity run), and
// nothing is said of a record.
func newDoc(rec *Record, asWas, prop *Result, arrivals bool) *Doc {
	d := &Doc{Schema: Schema, Node: rec.Node, From: rec.From, To: rec.To, Routing: Routing, Sessions: len(rec.Sessions), Proposal: prop != nil,
		// A copy, never nil: the record is shared (the editor's cache),
		// and appending to its notes could write into its array.
		Arrivals: arrivals, Notes: append([]string{}, rec.Notes...), Refused: []RefusalDoc{}, Agents: []AgentDoc{}, Missing: []MissingDoc{}}
	for i := range rec.Sessions {
		if rec.Sessions[i].Before {
			d.Before++
		}
	}
	d.AsItWas = AsItWasDoc{Refused: len(asWas.Refused), Compared: asWas.Compared, Disagreements: make([]DisagreementDoc, 0, len(asWas.Disagreements))}
	if arrivals {
		d.AsItWas.Refused = 0
	}
	for _, g := range asWas.Disagreements {
		if g.Refused != "" {
			d.AsItWas.Refused++
		}
		d.AsItWas.Disagreements = append(d.AsItWas.Disagreements, DisagreementDoc{Kernel: g.Kernel, Agent: g.Agent, At: g.At, Refused: g.Refused, Got: g.Got, held: g.held, Placed: g.Placed})
	}
	main := asWas
	if prop != nil {
		main = prop
	}
	d.Refused = make([]RefusalDoc, 0, len(main.Refused))
	for _, r := range main.Refused {
		on := r.CouldRunOn
		if on == nil {
			on = []model.AgentID{}
		}
		d.Refused = append(d.Refused, RefusalDoc{Kernel: r.Kernel, Session: r.Session, Owner: r.Owner, Agent: r.Agent, At: r.At,
			Requested: r.Requested, Kind: r.Kind, Reason: r.Reason, CouldRunOn: on, Before: r.Before})
	}
	// Without a proposal the run is the fidelity run: every session runs
	// where it really ran, and those the rules would have refused are
	// its disagreements, said per agent as such (not "all start").
	refusedRan := map[model.AgentID]int{}
	if prop == nil {
		for _, g := range asWas.Disagreements {
			if g.Refused != "" {
				refusedRan[g.Agent]++
			}
		}
	}
	for i := range main.Agents {
		a := &main.Agents[i]
		ad := AgentDoc{Agent: a.Agent, Sessions: a.Sessions, Refused: len(a.Refused), Absent: a.Absent, Slots: []SlotDoc{}, Verdict: a.Verdict()}
		if n := refusedRan[a.Agent]; n > 0 {
			ad.RefusedRan = n
			ad.Verdict = fmt.Sprintf("%s: all %d session(s) ran; the rules would have refused %d of them (as it was, above)", a.Agent, a.Sessions, n)
		}
		for _, s := range a.Slots {
			if a.Absent {
				// No amounts of its own, as in the text.
				break
			}
			sd := SlotDoc{Slot: s.Slot, Amount: s.Amount, Given: s.Given, Varies: s.Varies, Peak: s.Peak, PeakAt: s.PeakAt, OverSeconds: s.Over.Seconds()}
			if s.MeanUse.Valid {
				v := s.MeanUse.V
				sd.MeanUse = &v
			}
			ad.Slots = append(ad.Slots, sd)
		}
		d.Agents = append(d.Agents, ad)
	}
	for _, m := range rec.Missing {
		d.Missing = append(d.Missing, MissingDoc{From: m.From, To: m.To, Why: m.Why, Hides: GapHides})
	}
	if main.Unrouted > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d session(s) name no agent on a node of several agents: not replayed", main.Unrouted))
	}
	if asWas.Skipped > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d part(s) of where sessions really ran name a device the record's node does not list (or hold it under another slot): the replay leaves them out of the maps", asWas.Skipped))
	}
	if asWas.SameMoment > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d session(s) arrived within %s of another change of their agent's: which came first is not certain in the record (it has the moments fgtop saw the files), so where each landed is not compared", asWas.SameMoment, OrderSlack))
	}
	if ov := OverheldOf(asWas); len(ov) > 0 && !arrivals {
		d.Notes = append(d.Notes, joinOverheld(ov)+": "+OverheldWhy)
	}
	d.ServesAll = len(main.Refused) == 0 && (prop != nil || arrivals || d.AsItWas.Refused == 0)
	return d
}

// WriteText prints the document for an operator.
func (d *Doc) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	span := d.To.Sub(d.From)
	fmt.Fprintf(ew, "replay of %s, %s to %s (%s): %d session(s), %d already running at the start (placed first)\n",
		orDash(d.Node), stamp(d.From), stamp(d.To), Days(span), d.Sessions, d.Before)
	fmt.Fprintf(ew, "routing: %s\n", d.Routing)
	switch n := len(d.AsItWas.Disagreements); {
	case d.Arrivals:
		fmt.Fprintln(ew, "as it was: sessions from an arrivals file, not a record: nothing to check the rules against")
	case n == 0:
		fmt.Fprintf(ew, "as it was: the rules start every session the record saw run (%d placement(s) compared: each where it really ran)\n", d.AsItWas.Compared)
	default:
		fmt.Fprintf(ew, "as it was: the record and the rules disagree on %d session(s) (%d refused though they ran):\n", n, d.AsItWas.Refused)
		for i, g := range d.AsItWas.Disagreements {
			if i == 20 {
				fmt.Fprintf(ew, "  ... and %d more (--json lists them all)\n", n-20)
				break
			}
			if g.Refused != "" {
				fmt.Fprintf(ew, "  %s %s on %s: ran, but %s\n", stamp(g.At), g.Kernel, g.Agent, g.Refused)
				continue
			}
			fmt.Fprintf(ew, "  %s %s on %s: ran on %s; the allocator places it on %s\n", stamp(g.At), g.Kernel, g.Agent, allocText(g.got()), allocText(g.Placed))
		}
	}
	if d.Proposal {
		fmt.Fprintln(ew, "under the proposal:")
	} else {
		fmt.Fprintln(ew, "under the partition in force:")
	}
	for _, a := range d.Agents {
		fmt.Fprintf(ew, "\n%s: %d session(s)\n", a.Agent, a.Sessions)
		listed := 0
		for _, r := range d.Refused {
			if r.Agent != a.Agent {
				continue
			}
			if listed == Printed {
				fmt.Fprintf(ew, "  ... and %d more refused (--json lists them all)\n", a.Refused-Printed)
				break
			}
			listed++
			at := stamp(r.At)
			if r.Before {
				at += " (running at the start)"
			}
			fmt.Fprintf(ew, "  refused %s  kernel %s  session %s  owner %s  asked %s\n", at, r.Kernel, orDash(r.Session), orDash(r.Owner), Requested(r.Requested))
			fmt.Fprintf(ew, "    %s", r.Reason)
			if len(r.CouldRunOn) > 0 {
				ids := make([]string, len(r.CouldRunOn))
				for i, id := range r.CouldRunOn {
					ids[i] = string(id)
				}
				fmt.Fprintf(ew, "; could have run on %s", strings.Join(ids, ", "))
			}
			fmt.Fprintln(ew)
		}
		if a.Absent || len(a.Slots) == 0 {
			// No amounts of its own (a table would show the node's), or
			// no session to measure them by: a header with no rows.
			fmt.Fprintf(ew, "  %s\n", a.Verdict)
			continue
		}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  SLOT\tAMOUNT\tPEAK DEMAND\tOVER THE AMOUNT\tMEAN IN USE")
		for _, s := range a.Slots {
			amt := Amount(s.Slot, s.Amount)
			if !s.Given {
				amt += " (devices)"
			}
			if s.Varies {
				amt += " (at the end; it changed)"
			}
			use := "-"
			if s.MeanUse != nil {
				use = s.MeanUse.String()
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", s.Slot, amt, Amount(s.Slot, s.Peak), OverText(time.Duration(s.OverSeconds*float64(time.Second)), span), use)
		}
		tw.Flush()
		fmt.Fprintf(ew, "  %s\n", a.Verdict)
	}
	if len(d.Missing) > 0 {
		fmt.Fprintf(ew, "\nthe record lacks %d stretch(es) of the span (%s):\n", len(d.Missing), GapHides)
		for _, m := range d.Missing {
			if m.To.Equal(m.From) {
				// A damaged end: how far the record went is lost with it.
				if m.From.Before(d.From) {
					fmt.Fprintf(ew, "  from %s on: %s; the damage began before the span, at %s\n", stamp(d.From), m.Why, stamp(m.From))
					continue
				}
				fmt.Fprintf(ew, "  from %s on: %s\n", stamp(m.From), m.Why)
				continue
			}
			// Said within the span, as its header says: a gap that began
			// before it (or went on after it) says so, not a stretch that
			// reads as part of the span.
			from, to, past := m.From, m.To, ""
			if from.Before(d.From) {
				from, past = d.From, fmt.Sprintf("; the gap began before the span, at %s", stamp(m.From))
			}
			if to.After(d.To) {
				to, past = d.To, past+fmt.Sprintf("; the gap went on after the span, to %s", stamp(m.To))
			}
			fmt.Fprintf(ew, "  %s to %s: %s%s\n", stamp(from), stamp(to), m.Why, past)
		}
	}
	for _, n := range d.Notes {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	if !d.Arrivals {
		fmt.Fprintln(ew, "note: sessions the manager never sent (an agent full at the time) are not in the record: a replay shows whom smaller amounts would have starved, not whom larger ones would have admitted")
	}
	refused := d.RefusedCount()
	switch {
	case d.Sessions == 0:
		// "all 0 session(s) start" read as a partition that serves the
		// span, as each agent's line did.
		fmt.Fprintln(ew, "verdict: no session in the span: nothing to judge the partition by")
	case refused == 0:
		fmt.Fprintf(ew, "verdict: all %d session(s) start\n", d.Sessions)
	case !d.Proposal && !d.Arrivals:
		fmt.Fprintf(ew, "verdict: the record saw all %d session(s) run; under the partition in force the rules would have refused %d of them (as it was, above)\n", d.Sessions, refused)
	default:
		fmt.Fprintf(ew, "verdict: %d of %d session(s) would not have started\n", refused, d.Sessions)
	}
	return ew.err
}

// RefusedCount is how many sessions would not have started: under the
// proposal, or without one under the partition in force.
func (d *Doc) RefusedCount() int {
	if d.Proposal || d.Arrivals {
		return len(d.Refused)
	}
	return d.AsItWas.Refused
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Days is a duration as the replay prints it: 0, 45m, 3h20m, 2d4h,
// rounded to the minute (to the second under one). The editor's replay
// line says a record's length with it, so the two agree.
func Days(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	if d < time.Second/2 {
		// Not "0s" beside a peak over the amount: it was over, briefly.
		return "<1s"
	}
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Minute)
	day := d / (24 * time.Hour)
	d -= day * 24 * time.Hour
	hr, min := d/time.Hour, (d%time.Hour)/time.Minute
	var s string
	if day > 0 {
		s += fmt.Sprintf("%dd", day)
	}
	if hr > 0 {
		s += fmt.Sprintf("%dh", hr)
	}
	if min > 0 && day == 0 {
		s += fmt.Sprintf("%dm", min)
	}
	if s == "" {
		s = "0"
	}
	return s
}

// OverText is how long a demand was over its amount, in a span this
// long, as the replay table prints it: Days, unless that reads as the
// whole span though it was less (100.6 s of 1m49s both read "2m"); then
// to the second, cut down, so that "most of it" never reads as "all the
// time".
func OverText(over, span time.Duration) string {
	s := Days(over)
	if over >= span || over < time.Minute || s != Days(span) {
		return s
	}
	d := over.Truncate(time.Second)
	day := d / (24 * time.Hour)
	d -= day * 24 * time.Hour
	hr, min, sec := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	s = ""
	if day > 0 {
		s += fmt.Sprintf("%dd", day)
	}
	if day > 0 || hr > 0 {
		s += fmt.Sprintf("%dh", hr)
	}
	return s + fmt.Sprintf("%dm%ds", min, sec)
}

// allocText is an allocation as one line: slot device=amount ...
func allocText(a model.Allocations) string {
	if len(a) == 0 {
		return "nothing"
	}
	var parts []string
	slots := make(model.ResourceSlot, len(a))
	for s := range a {
		slots[s] = model.Zero
	}
	for _, s := range slots.Names() {
		var ds []string
		for id, v := range a[s] {
			ds = append(ds, fmt.Sprintf("%s=%s", id, Amount(s, v)))
		}
		slices.Sort(ds)
		parts = append(parts, fmt.Sprintf("%s %s", s, strings.Join(ds, ",")))
	}
	return strings.Join(parts, "; ")
}
