// Package histtext writes `fgtop history`'s answer: the table, padded
// by hand in parts on several cores (a week's tens of thousands of lines),
// or the JSON document, and says what the answer lacks. Pure functions
// from the answer to bytes, tested without the binary.
package histtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/internal/parallel"
	"github.com/fgtop/fgtop/model"
)

// Schema names the JSON layout of `fgtop history --json`.
const Schema = "fgtop.history/v1"

type historyDoc struct {
	Schema    string       `json:"schema"`
	From      string       `json:"record_from"`
	To        string       `json:"record_to"`
	Intervals []Interval   `json:"intervals"`
	Missing   []missingDoc `json:"missing"`
	// Skipped are the files named like segments the reader left out
	// (not regular files, named for a time to come).
	Skipped []skippedDoc `json:"skipped_files,omitempty"`
	// Partitions are the agent.toml journal's records in the span: the
	// partition changes applied (and rolled back) meanwhile.
	Partitions []partitionDoc `json:"partition_changes"`
}

type skippedDoc struct {
	File string `json:"file"`
	Why  string `json:"why"`
}

type partitionDoc struct {
	Time    string `json:"time"`
	Action  string `json:"action"`
	Actor   string `json:"actor"`
	Config  string `json:"config"`
	OldHash string `json:"old_hash"`
	NewHash string `json:"new_hash"`
	Result  string `json:"result"`
}

// Interval is one row of `history --json`'s intervals: one kernel's hold
// on one device, as the record tells it. The fleet's merged history
// carries the same row with the node beside it.
type Interval struct {
	Device  string            `json:"device"`
	Kernel  string            `json:"kernel"`
	Agent   string            `json:"agent"`
	Session string            `json:"session_id,omitempty"`
	User    string            `json:"owner_user_id,omitempty"`
	Project string            `json:"owner_project_id,omitempty"`
	Amounts map[string]string `json:"amounts"`
	From    string            `json:"from"`
	To      string            `json:"to"`
	// Since: already holding when the record (or the record after a gap)
	// began; Open: still holding when it ends; Gone: ended in a gap.
	Since bool `json:"since_before_from,omitempty"`
	Open  bool `json:"open,omitempty"`
	Gone  bool `json:"ended_in_gap,omitempty"`
}

type missingDoc struct {
	From string `json:"from"`
	To   string `json:"to"`
	Why  string `json:"why"`
	// OpenEnded: the lost end of a damaged last segment, whose own end is
	// lost with it; To is then the end of what was asked (or now).
	OpenEnded bool `json:"open_ended,omitempty"`
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// stamp is a moment in a sentence, as the record's other messages say one
// (the listing's columns drop the zone its header gives).
func stamp(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") }

// Options say how Write lists.
type Options struct {
	// JSON: the document (Schema) instead of the table.
	JSON bool
	// Active: a recorder holds the record, so a span after its end is
	// not outside it (it is being written).
	Active bool
	// Now is the end of a span asked with --since alone (zero: the span
	// ends with the record).
	Now time.Time
	// Full: the table's kernel, session and user ids whole (--no-trunc);
	// else a UUID is cut to the fewest of its first characters, 8 at
	// least, that tell apart the column's UUIDs (Abbrev). The JSON is
	// always whole.
	Full bool
}

// Write lists res, the answer to f, as `fgtop history` prints it: the
// table (or the JSON document) of its intervals cut to f's span
// (history.CutToSpan), the partition changes and the stretches
// the record lacks in the asked span. It returns what is amiss in the
// answer (the span outside the record, stretches missing), worded for
// the user, for the caller to report and exit on; err is a write error.
func Write(w io.Writer, res *history.HistoryResult, f history.Filter, o Options) (problems []string, err error) {
	parts, asJSON, active := res.Partitions, o.JSON, o.Active
	recTo := res.To
	if res.RecordTo.After(recTo) {
		recTo = res.RecordTo
	}
	// An --until written to the second that a record no recorder writes
	// any more ends in is its end (history.AtEnd), as the query read it:
	// not a span cut short by the fraction the printed end left off.
	if !f.Until.IsZero() && !active {
		f.Until = history.AtEnd(f.Until, recTo)
	}
	ivs := history.CutToSpan(res.Intervals, f)
	stay := kernelStay(res.Intervals, f)
	// A --since written to the second that the record begins in is its
	// beginning (history.AtStart), as snapshot --at reads it.
	since := f.Since
	if !since.IsZero() {
		since = history.AtStart(since, res.From)
	}
	if !f.Until.IsZero() && f.Until.Before(res.From) || !since.IsZero() && since.After(recTo) && !active {
		// The record's bounds with their fractions where the span's
		// ends fall in their seconds.
		st := history.Stamps(f.Until, since, res.From, recTo)
		problems = append(problems, fmt.Sprintf("the asked span is outside the record, which covers %s to %s", st[2], st[3]))
	} else if !since.IsZero() && since.Before(res.From) && stay.touches(since, res.From) {
		problems = append(problems, fmt.Sprintf("the record begins at %s, after --since", history.Stamps(since, res.From)[1]))
	}
	var missing []history.Missing
	before := 0 // the stretch before the record, said in problems already
	if !since.IsZero() && since.Before(res.From) && !res.From.IsZero() && stay.touches(since, res.From) {
		// Listed too, as a stretch the answer lacks: what was held then
		// is not known, and a reader of the document (fleet history)
		// has it with the node's other gaps.
		to := res.From
		if !f.Until.IsZero() && f.Until.Before(to) {
			to = f.Until
		}
		missing = append(missing, history.Missing{From: since, To: to, Why: "before the record begins: no recorder wrote then"})
		before = 1
	}
	for _, m := range res.Missing {
		if (f.Until.IsZero() || !m.From.After(f.Until)) && (f.Since.IsZero() || !m.To.Before(f.Since)) {
			missing = append(missing, m)
		}
	}
	// A span that runs on past the end of a record nothing writes to any
	// more lacks its last stretch, as snapshot --at says of a moment there:
	// what was held then is not known (an "open" row was held at the end).
	end := f.Until
	if end.IsZero() && !f.Since.IsZero() {
		end = o.Now
	}
	if !end.IsZero() && !active && !res.To.IsZero() && end.After(recTo) && !f.Since.After(recTo) && !res.More {
		missing = append(missing, history.Missing{From: res.To, To: end, Why: "not recorded: the record ends here and no recorder has written since"})
	}
	// A recorder that holds the directory writes at least every beat: one
	// silent for longer is not writing (stopped, a full disk), so what was
	// held after its last write is not known, as snapshot --at says of a
	// moment there; an "open" row would read as held up to now.
	stale := active && !o.Now.IsZero() && !res.To.IsZero() && o.Now.After(recTo.Add(history.SilentAfter)) && !res.More
	if stale && !end.IsZero() && end.After(recTo.Add(history.SilentAfter)) {
		from := recTo
		if f.Since.After(from) {
			from = f.Since
		}
		missing = append(missing, history.Missing{From: from, To: end, Why: history.NotWriting})
	}
	// Asked of a kernel, a stretch the record lacks outside its stay
	// hides nothing of it: the answer is whole without it.
	missing = slices.DeleteFunc(missing, func(m history.Missing) bool { return !stay.touches(m.From, m.To) })
	if asJSON {
		doc := historyDoc{Schema: Schema, From: rfc(res.From), To: rfc(recTo), Intervals: []Interval{}, Missing: []missingDoc{},
			Partitions: []partitionDoc{}}
		for _, jr := range parts {
			doc.Partitions = append(doc.Partitions, partitionDoc{Time: rfc(jr.Time), Action: jr.Action, Actor: jr.Actor, Config: jr.Config,
				OldHash: jr.OldHash, NewHash: jr.NewHash, Result: jr.Result})
		}
		for _, iv := range ivs {
			am := map[string]string{}
			for s, v := range iv.Amounts {
				am[string(s)] = v.String()
			}
			doc.Intervals = append(doc.Intervals, Interval{Device: iv.Device.String(), Kernel: string(iv.Kernel), Agent: string(iv.Agent),
				Session: iv.Session, User: iv.User, Project: iv.Project, Amounts: am, From: rfc(iv.From), To: rfc(iv.To),
				Since: iv.Since, Open: iv.Open, Gone: iv.Gone})
		}
		for _, m := range missing {
			md := missingDoc{From: rfc(m.From), To: rfc(m.To), Why: m.Why}
			if m.To.Equal(m.From) {
				// A stretch of no length reads as nothing lost.
				md.OpenEnded = true
				if end.After(m.From) {
					md.To = rfc(end)
				} else if o.Now.After(m.From) {
					md.To = rfc(o.Now)
				}
			}
			doc.Missing = append(doc.Missing, md)
		}
		for _, sk := range res.Skipped {
			doc.Skipped = append(doc.Skipped, skippedDoc{File: sk.Path, Why: sk.Why})
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return nil, err
		}
	} else {
		var cut [3]int
		if !o.Full {
			cut = Abbrev(ivs)
		}
		if !writeTable(w, ivs, cut) {
			writeTabs(w, ivs, cut)
		}
		if len(ivs) == 0 {
			fmt.Fprintln(w, nothingHeld(f, missing))
		}
		for _, jr := range parts {
			fmt.Fprintf(w, "partition: %s %s by %s (%s): %s\n", jr.Time.Local().Format("2006-01-02 15:04:05"), jr.Action, jr.Actor, jr.Result, jr.Config)
		}
		for _, m := range missing {
			fmt.Fprintf(w, "missing: %s\n", m)
		}
		if f.Since.IsZero() && f.Until.IsZero() && !active && !o.Now.IsZero() && o.Now.After(recTo) && !res.More &&
			slices.ContainsFunc(ivs, func(iv history.Interval) bool { return iv.Open }) {
			// The whole record asked: nothing of it is missing, but at
			// 3 a.m. "open" reads as "holds it now".
			fmt.Fprintf(w, "note: the record ends at %s and no recorder writes to it now: a TO of \"open\" was held then; since then is not known\n", stamp(recTo))
		}
		if f.Since.IsZero() && f.Until.IsZero() && stale && slices.ContainsFunc(ivs, func(iv history.Interval) bool { return iv.Open }) {
			fmt.Fprintf(w, "note: the record ends at %s: %s; a TO of \"open\" was held then; since then is not known\n", stamp(recTo), history.NotWriting)
		}
		for _, sk := range res.Skipped {
			fmt.Fprintf(w, "skipped: %s\n", sk)
		}
	}
	if n := len(missing) - before; n > 0 {
		problems = append(problems, fmt.Sprintf("the record lacks %d stretch(es) of the asked span (listed above)", n))
	}
	return problems, nil
}

// span is a stretch of the clock; a zero end is unbounded on its side.
type span struct {
	from, to time.Time
	whole    bool // every stretch touches it
}

// touches reports whether the stretch from..to meets s, its ends
// included: a kernel held since a gap's end ("<") may have begun in it,
// one that ended at a gap's start ("?") ended somewhere in it.
func (s span) touches(from, to time.Time) bool {
	return s.whole || (s.to.IsZero() || !from.After(s.to)) && (s.from.IsZero() || !to.Before(s.from))
}

// kernelStay is, for a question about a kernel (f.Kernel), the stretch
// the record shows it in: from its first interval's start to its last
// one's end, unbounded after where it is still held at the record's end.
// A kernel lives once, so what the record lacks outside that stretch
// cannot hide a hold of it. Asked of anything else, or of a kernel with
// no interval, the stay is the whole record.
func kernelStay(ivs []history.Interval, f history.Filter) span {
	if f.Kernel == "" || len(ivs) == 0 {
		return span{whole: true}
	}
	s := span{from: ivs[0].From, to: ivs[0].To}
	open := false
	for _, iv := range ivs {
		if iv.From.Before(s.from) {
			s.from = iv.From
		}
		if iv.To.After(s.to) {
			s.to = iv.To
		}
		open = open || iv.Open
	}
	if open {
		s.to = time.Time{}
	}
	return s
}

// nothingHeld says an empty table in words: nothing held, unless the
// record lacks some of the asked span, where what was held is not known.
// An operator asking who held a device at a moment a recorder was killed
// read "nothing held" above the gap's line.
func nothingHeld(f history.Filter, missing []history.Missing) string {
	if len(missing) == 0 {
		return "(nothing held in the asked span)"
	}
	for _, m := range missing {
		if !f.Since.IsZero() && !f.Until.IsZero() && !m.From.After(f.Since) && !m.To.Before(f.Until) {
			return "(the record lacks all of the asked span, listed below: what was held then is not known)"
		}
	}
	return "(nothing held in what the record has of the asked span; what was held in the stretches it lacks, listed below, is not known)"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// header is the table's first line's cells.
var header = [...]string{"FROM", "TO", "DEVICE", "AMOUNT", "KERNEL", "SESSION", "USER", "AGENT"}

// writeTabs writes the table through a tabwriter, the UUIDs of the
// kernel, session and user columns cut as Abbrev says.
func writeTabs(w io.Writer, ivs []history.Interval, cut [3]int) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header[:], "\t"))
	for _, iv := range ivs {
		var c [len(header)]string
		cells(&c, iv)
		for j := range 3 {
			c[4+j] = CutUUID(c[4+j], cut[j])
		}
		fmt.Fprintln(tw, strings.Join(c[:], "\t"))
	}
	tw.Flush()
}

// cells puts an interval's cells in c.
func cells(c *[len(header)]string, iv history.Interval) {
	from := iv.From.Local().Format("2006-01-02 15:04:05")
	if iv.Since {
		from = "<" + from
	}
	to := iv.To.Local().Format("2006-01-02 15:04:05")
	switch {
	case iv.Open:
		to = "open"
	case iv.Gone:
		to += "?"
	}
	var am []string
	for _, s := range iv.Amounts.Names() {
		am = append(am, string(s)+"="+amountText(s, iv.Amounts[s]))
	}
	*c = [...]string{from, to, iv.Device.String(), strings.Join(am, ","), string(iv.Kernel), dash(iv.Session), dash(iv.User), dash(string(iv.Agent))}
}

// amountText is an amount of slot as the console prints it: memory (and
// any slot of bytes) in binary units, as resource.txt's MEM_SHARES writes
// it (16g, not 17179869184); --json keeps the bytes.
func amountText(slot model.SlotName, v model.Dec) string {
	if slot == model.SlotMem || model.DefaultSlotTypes().TypeOf(slot) == model.SlotTypeBytes {
		return model.FormatBinarySize(v)
	}
	return v.String()
}

// writeTable writes the table as writeTabs does (columns as
// wide as their widest cell and two spaces), but measured and padded here
// in buffers, in parts on up to GOMAXPROCS goroutines: a week's tens of
// thousands of lines through fmt and a tabwriter were a sixth of the
// command's time. It writes nothing and returns false when a cell holds a
// byte the tabwriter treats specially.
func writeTable(w io.Writer, ivs []history.Interval, cut [3]int) bool {
	return writeParts(w, ivs, parallel.Parts(len(ivs), 8192, 4), cut)
}

// writeParts is writeTable in parts parts.
func writeParts(w io.Writer, ivs []history.Interval, parts int, cut [3]int) bool {
	tps := make([]tablePart, parts)
	for i := range tps {
		tps[i].cut = cut
	}
	part := func(p int) {
		if p == 0 {
			tps[p].writeHeader()
		}
		tps[p].addCells(ivs[len(ivs)*p/parts : len(ivs)*(p+1)/parts])
	}
	wait := parallel.Start(parts, part)
	part(0)
	wait()
	var widths [len(header)]int
	for _, tp := range tps {
		if !tp.ok {
			return false
		}
		for i, v := range tp.widths {
			widths[i] = max(widths[i], v)
		}
	}
	// A column is its widest cell and the padding (2) wide, the last one
	// as its cells are.
	const padding = 2
	for i := range widths {
		widths[i] += padding
	}
	pad := func(p int) { tps[p].pad(&widths) }
	wait = parallel.Start(parts, pad)
	pad(0)
	wait()
	for _, tp := range tps {
		if _, err := w.Write(tp.out); err != nil {
			break
		}
	}
	return true
}

// tablePart is some lines of the history table: their cells one after
// another in arena, ends[i] where cell i ends, each column's widest cell.
type tablePart struct {
	arena  []byte
	ends   []int
	widths [len(header)]int
	ok     bool
	out    []byte
	// cut: the kernel, session and user columns' UUIDs cut to so many
	// characters (0: whole).
	cut [3]int
}

// add ends the cell of column col that arena's end closes.
func (tp *tablePart) add(col int) bool {
	start := 0
	if len(tp.ends) > 0 {
		start = tp.ends[len(tp.ends)-1]
	}
	cell := tp.arena[start:]
	if bytes.ContainsAny(cell, "\t\n\v\f\xff") {
		return false
	}
	tp.widths[col] = max(tp.widths[col], utf8.RuneCount(cell))
	tp.ends = append(tp.ends, len(tp.arena))
	return true
}

func (tp *tablePart) writeHeader() {
	for i, h := range header {
		tp.arena = append(tp.arena, h...)
		tp.add(i)
	}
}

// addCells lays out the intervals' cells; ok says none holds a byte the
// tabwriter treats specially.
func (tp *tablePart) addCells(ivs []history.Interval) {
	if tp.arena == nil {
		tp.arena = make([]byte, 0, 160*len(ivs))
	}
	tp.ends = slices.Grow(tp.ends, len(header)*len(ivs))
	for _, iv := range ivs {
		a := tp.arena
		if iv.Since {
			a = append(a, '<')
		}
		tp.arena = iv.From.Local().AppendFormat(a, "2006-01-02 15:04:05")
		ok := tp.add(0)
		switch {
		case iv.Open:
			tp.arena = append(tp.arena, "open"...)
		case iv.Gone:
			tp.arena = iv.To.Local().AppendFormat(tp.arena, "2006-01-02 15:04:05")
			tp.arena = append(tp.arena, '?')
		default:
			tp.arena = iv.To.Local().AppendFormat(tp.arena, "2006-01-02 15:04:05")
		}
		ok = tp.add(1) && ok
		tp.arena = append(tp.arena, iv.Device.Name...)
		tp.arena = append(tp.arena, ':')
		tp.arena = append(tp.arena, iv.Device.ID...)
		ok = tp.add(2) && ok
		for j, s := range iv.Amounts.Names() {
			if j > 0 {
				tp.arena = append(tp.arena, ',')
			}
			tp.arena = append(tp.arena, s...)
			tp.arena = append(tp.arena, '=')
			tp.arena = append(tp.arena, amountText(s, iv.Amounts[s])...)
		}
		ok = tp.add(3) && ok
		for j, v := range [...]string{string(iv.Kernel), dash(iv.Session), dash(iv.User), dash(string(iv.Agent))} {
			if j < 3 {
				v = CutUUID(v, tp.cut[j])
			}
			tp.arena = append(tp.arena, v...)
			ok = tp.add(4+j) && ok
		}
		if !ok {
			return
		}
	}
	tp.ok = true
}

// pad writes the part's lines, each cell but the last padded to its
// column's width.
func (tp *tablePart) pad(widths *[len(header)]int) {
	const nc = len(header)
	tp.out = make([]byte, 0, len(tp.arena)+len(tp.ends)/nc*(widths[0]*nc))
	start := 0
	for i, end := range tp.ends {
		col := i % nc
		cell := tp.arena[start:end]
		start = end
		tp.out = append(tp.out, cell...)
		if col == nc-1 {
			tp.out = append(tp.out, '\n')
			continue
		}
		for n := widths[col] - utf8.RuneCount(cell); n > 0; n-- {
			tp.out = append(tp.out, ' ')
		}
	}
}

// minCut is the fewest characters of a UUID the table shows: what
// `docker ps` and git show of an id, and what --kernel, --session and
// --user take as a prefix.
const minCut = 8

// Abbrev says to how many characters the history table cuts the UUIDs of
// its kernel, session and user columns: per column, the fewest of their
// first characters, minCut at least, that tell apart every UUID in it
// (ids that are not UUIDs are shown whole; so are devices: a mock
// node's UUIDs share all but their last characters, and a prefix that
// tells apart the table's devices may name all of the record's), and a
// UUID is cut no shorter than such an id of its column it would read
// as. Two kernels in the table never read as one; a prefix shown may still name
// several in the whole record, and --kernel then lists them.
func Abbrev(ivs []history.Interval) [3]int {
	return AbbrevRows(len(ivs), func(i int) [3]string {
		iv := &ivs[i]
		return [3]string{string(iv.Kernel), iv.Session, iv.User}
	})
}

// AbbrevRows is Abbrev over n rows whose kernel, session and user ids
// row(i) gives (fleet history's rows are the nodes' documents').
func AbbrevRows(n int, row func(i int) [3]string) [3]int {
	var cut [3]int
	ids := make([][]string, 3)
	seen := make([]map[string]struct{}, 3)
	// whole are the ids shown whole (no UUID) that a UUID cut short
	// could read as, by column.
	whole := make([]map[string]bool, 3)
	for j := range seen {
		seen[j], whole[j] = map[string]struct{}{}, map[string]bool{}
	}
	for i := range n {
		for j, v := range row(i) {
			if !isUUID(v) {
				if len(v) >= minCut && len(v) < 36 {
					whole[j][v] = true
				}
				continue
			}
			if _, ok := seen[j][v]; !ok {
				seen[j][v] = struct{}{}
				ids[j] = append(ids[j], v)
			}
		}
	}
	for j, l := range ids {
		slices.Sort(l)
		n := minCut
		for i := 1; i < len(l); i++ {
			n = max(n, commonPrefix(l[i-1], l[i])+1)
		}
		// Nor may a UUID cut short read as an id shown whole beside it.
		for i := 0; i < len(l) && len(whole[j]) > 0; i++ {
			if whole[j][l[i][:n]] {
				n++
				i = -1
			}
		}
		cut[j] = n
	}
	return cut
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// CutUUID is v's first n characters where v is a UUID and n cuts it
// (Abbrev's cut), else v.
func CutUUID(v string, n int) string {
	if n <= 0 || n >= len(v) || !isUUID(v) {
		return v
	}
	return v[:n]
}

// isUUID reports whether v is a UUID in its canonical text form (what
// Backend.AI's kernel, session and user ids are).
func isUUID(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}
