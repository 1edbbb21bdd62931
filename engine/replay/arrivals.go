package replay

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// Bounds on an arrivals file: it is outside input. MaxArrivalLine
// bounds a row, far above any session's (a few hundred bytes): an amount
// of millions of digits fits the file's bound, and reading it as a
// decimal costs time quadratic in its length (a 50 MiB one ran for
// minutes), and its error said it whole.
const (
	MaxArrivalsBytes = 64 << 20
	MaxArrivals      = 1 << 20
	MaxArrivalLine   = 16 << 10
)

// ParseArrivals reads sessions exported from elsewhere (the manager, a
// public cluster trace), one a line, in either form (docs/replay.md):
//
//	CSV, with an optional header line start,end,agent,slots:
//	  2026-11-23T03:00:00Z,2026-11-23T04:00:00Z,i-node-a,"cuda.shares=0.8,cpu=8,mem=32g"
//	JSON lines:
//	  {"start": "2026-11-23T03:00:00Z", "end": "...", "agent": "i-node-a", "slots": {"cuda.shares": "0.8", "cpu": "8"}}
//
// start is RFC 3339; end RFC 3339 or empty (still running at the end);
// agent may be empty (the first agent that takes it, in config order);
// slots are written as simulate's requests (slot=amount, comma- or
// semicolon-separated; a JSON object in JSON lines). Blank lines and
// lines starting with # are skipped, and a leading UTF-8 byte order
// mark. A bad row is refused with its line
// number; nothing is guessed.
func ParseArrivals(data []byte, types model.SlotTypes) ([]Session, error) {
	if len(data) > MaxArrivalsBytes {
		return nil, fmt.Errorf("the arrivals file is %d bytes, more than the %d read", len(data), MaxArrivalsBytes)
	}
	var out []Session
	var errs []error
	// A spreadsheet's export (Excel's "CSV UTF-8") begins with a byte
	// order mark: not part of the first field.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	lines := bytes.Split(data, []byte("\n"))
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(string(raw), "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(out) >= MaxArrivals {
			return nil, fmt.Errorf("line %d: more than %d sessions", n, MaxArrivals)
		}
		var s Session
		var err error
		switch {
		case strings.HasPrefix(line, "["):
			// Read as CSV, a JSON array said "bare \" in non-quoted-field".
			err = errors.New(`a JSON array: want one session object a line, such as {"start": "2026-11-23T03:00:00Z", "slots": {"cuda.shares": "0.5"}}`)
		case len(line) > MaxArrivalLine:
			err = fmt.Errorf("%d bytes, more than the %d a session's line may hold", len(line), MaxArrivalLine)
		case strings.HasPrefix(line, "{"):
			s, err = arrivalJSON(line, types)
		case len(out) == 0 && len(errs) == 0 && looksLikeHeader(line):
			if err = csvHeader(line); err == nil {
				continue
			}
			// The rows after a header of other columns would be read
			// in the wrong ones, each with an error of its own that
			// hides this one.
			return nil, fmt.Errorf("line %d: %w", n, err)
		default:
			s, err = arrivalCSV(line, types)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n, err))
			if len(errs) == 20 {
				errs = append(errs, errors.New("(stopped at 20 bad lines)"))
				break
			}
			continue
		}
		s.Kernel = model.KernelID(fmt.Sprintf("line-%d", n))
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, errors.New("the arrivals file lists no session")
	}
	slices.SortStableFunc(out, func(a, b Session) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// looksLikeHeader reports whether a CSV line begins with one of the
// header's names (a header, in the right order or not) or with "start"
// (start_time, …: a header of other names). No row does: a row begins
// with a time.
func looksLikeHeader(line string) bool {
	first, _, _ := strings.Cut(line, ",")
	first = strings.ToLower(strings.Trim(strings.TrimSpace(first), `"`))
	return strings.HasPrefix(first, "start") || slices.Contains([]string{"end", "agent", "slots"}, first)
}

func csvHeader(line string) error {
	r := csv.NewReader(strings.NewReader(line))
	f, err := r.Read()
	if err != nil {
		return err
	}
	want := []string{"start", "end", "agent", "slots"}
	for i := range f {
		f[i] = strings.ToLower(strings.TrimSpace(f[i]))
	}
	if !slices.Equal(f, want) {
		return fmt.Errorf("the header is %q; want start,end,agent,slots, in that order (the columns are read by their place)", line)
	}
	return nil
}

func arrivalCSV(line string, types model.SlotTypes) (Session, error) {
	r := csv.NewReader(strings.NewReader(line))
	r.FieldsPerRecord = -1
	f, err := r.Read()
	if err == io.EOF {
		return Session{}, errors.New("empty")
	}
	var perr *csv.ParseError
	if errors.As(err, &perr) {
		// The reader sees one line at a time: its own line number is
		// always 1, and the caller says the file's.
		return Session{}, fmt.Errorf("column %d: %v", perr.Column, perr.Err)
	}
	if err != nil {
		return Session{}, err
	}
	if len(f) != 4 {
		return Session{}, fmt.Errorf("%d field(s); want start,end,agent,slots (quote slots that hold commas)", len(f))
	}
	return arrival(f[0], f[1], f[2], strings.ReplaceAll(f[3], ";", ","), types)
}

// sessionFields are a JSON line's keys, as written: encoding/json's
// struct fields also take "Start" and "START", and of "start" and
// "Start" in one object kept the last, a guess duplicateKey cannot see.
var sessionFields = []string{"start", "end", "agent", "slots"}

func arrivalJSON(line string, types model.SlotTypes) (Session, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(line))
	if err := dec.Decode(&m); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Session{}, errors.New("not a session object: it is not closed (one object a line)")
		}
		return Session{}, fmt.Errorf("not a session object: %v", err)
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if !slices.Contains(sessionFields, k) {
			return Session{}, fmt.Errorf("not a session object: unknown field %q%s; a session's fields are %s", k, model.DidYouMean(k, sessionFields), strings.Join(sessionFields, ", "))
		}
	}
	var v struct {
		Start, End *string
		Agent      string
		Slots      json.RawMessage
	}
	for _, f := range []struct {
		key string
		to  **string
	}{{"start", &v.Start}, {"end", &v.End}, {"agent", nil}} {
		raw, ok := m[f.key]
		if !ok || string(raw) == "null" {
			continue
		}
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return Session{}, fmt.Errorf("%s: %s is not a string", f.key, truncRaw(raw))
		}
		if f.to == nil {
			v.Agent = str
		} else {
			*f.to = &str
		}
	}
	v.Slots = m["slots"]
	// encoding/json keeps the last of a key given twice: which one was
	// meant is a guess.
	if k, ok := duplicateKey(line); ok {
		return Session{}, fmt.Errorf("%q is given twice: which is meant is not known", k)
	}
	// One object a line: a second one, or anything after the first,
	// would be dropped unread.
	if rest := strings.TrimSpace(line[dec.InputOffset():]); rest != "" {
		if len(rest) > 40 {
			rest = rest[:40] + "..."
		}
		return Session{}, fmt.Errorf("more after the session object, %q: one object a line", rest)
	}
	if v.Start == nil {
		return Session{}, errors.New("no start")
	}
	end := ""
	if v.End != nil {
		end = *v.End
	}
	slots := strings.TrimSpace(string(v.Slots))
	if strings.HasPrefix(slots, "[") {
		return Session{}, fmt.Errorf(`slots: a list, %s; want an object such as {"cuda.shares": "0.5", "cpu": "2"} or a string such as "cuda.shares=0.5,cpu=2"`, truncRaw(v.Slots))
	}
	if strings.HasPrefix(slots, "\"") {
		if err := json.Unmarshal(v.Slots, &slots); err != nil {
			return Session{}, fmt.Errorf("slots: %v", err)
		}
	}
	return arrival(*v.Start, end, v.Agent, slots, types)
}

func arrival(start, end, agent, slots string, types model.SlotTypes) (Session, error) {
	s := Session{Agent: model.AgentID(strings.TrimSpace(agent)), Requested: model.ResourceSlot{}}
	var err error
	if s.Start, err = time.Parse(time.RFC3339Nano, strings.TrimSpace(start)); err != nil {
		return s, fmt.Errorf("start %q: want an RFC 3339 time such as 2026-11-23T03:00:00Z", start)
	}
	if end = strings.TrimSpace(end); end == "" {
		s.Open = true
	} else {
		if s.End, err = time.Parse(time.RFC3339Nano, end); err != nil {
			return s, fmt.Errorf("end %q: want an RFC 3339 time, or nothing for a session still running", end)
		}
		if !s.Start.Before(s.End) {
			return s, fmt.Errorf("end %s is not after start %s", end, start)
		}
	}
	if strings.TrimSpace(slots) == "" || strings.TrimSpace(slots) == "null" {
		return s, errors.New("no slots: want slot=amount,... such as cuda.shares=0.5,cpu=2,mem=4g")
	}
	st, err := placement.ParseStep(slots, types)
	if ae, ok := errors.AsType[*placement.AmountError](err); ok {
		// It names the amount; the row's slots before it would say the
		// amount twice ("cuda.shares=abc": cuda.shares=abc: ...), and
		// the line number already finds the row.
		return s, fmt.Errorf("slots: %w", ae)
	}
	if err != nil {
		return s, fmt.Errorf("slots: %w", err)
	}
	if st.IsFree() {
		return s, fmt.Errorf("slots %q: free= is a simulate step, not a request", slots)
	}
	if err := st.CheckAmounts(types); err != nil {
		return s, fmt.Errorf("slots: %w", err)
	}
	for _, e := range st.Request {
		if e.Amount.Sign() > 0 {
			if types.TypeOf(e.Slot) != model.SlotTypeBytes {
				e.Amount = asSent(e.Amount)
			}
			s.Requested[e.Slot] = e.Amount
		}
	}
	if len(s.Requested) == 0 {
		return s, fmt.Errorf("slots %q ask for nothing", slots)
	}
	return s, nil
}

// CheckArrivals checks sessions read by ParseArrivals against the node
// they are replayed on: each slot one of known (a misspelt one told as
// its typo: "did you mean cuda.shares?") and each agent named one of
// agents. A session of another node, or a typo, would otherwise be
// replayed as refused, and the operator told that a partition starves
// it. Every bad line is said, by its number.
func CheckArrivals(sessions []Session, known []model.SlotName, agents []model.AgentID) error {
	var errs []error
	for i := range sessions {
		s := &sessions[i]
		line := strings.TrimPrefix(string(s.Kernel), "line-")
		for _, slot := range s.Requested.Names() {
			if err := model.CheckSlot(slot, known); err != nil {
				errs = append(errs, fmt.Errorf("line %s: %w", line, err))
			}
		}
		if s.Agent != "" && !slices.Contains(agents, s.Agent) {
			names := make([]string, len(agents))
			for k, a := range agents {
				names[k] = string(a)
			}
			mean := ""
			if c := model.Closest(string(s.Agent), names); c != "" {
				mean = ": did you mean " + c + "?"
			}
			errs = append(errs, fmt.Errorf("line %s: agent %q is not one of this node's%s (%s)", line, s.Agent, mean, strings.Join(names, ", ")))
		}
		if len(errs) >= 20 {
			errs = append(errs, errors.New("(stopped at 20 errors)"))
			break
		}
	}
	return errors.Join(errs...)
}

// ArrivalsRecord is a Record of sessions from an arrivals file on the
// node of snap (its devices, allocator and agents), under partition.
func ArrivalsRecord(sessions []Session, snap *model.Snapshot, settings placement.Settings, agents []model.Agent) *Record {
	rec := &Record{Node: snap.Node, Devices: slices.Clone(snap.Devices), Settings: settings, Sessions: sessions}
	for i := range rec.Devices {
		rec.Devices[i].Telemetry = nil
	}
	rec.From = sessions[0].Start
	for _, s := range sessions {
		if s.End.After(rec.To) {
			rec.To = s.End
		}
		if s.Start.After(rec.To) {
			rec.To = s.Start
		}
	}
	open, none := 0, 0
	for i := range rec.Sessions {
		s := &rec.Sessions[i]
		if s.Open {
			s.End = rec.To
			open++
			if !s.Start.Before(rec.To) {
				none++
			}
		}
	}
	rec.Epochs = []Epoch{{At: rec.From, Agents: partitionOf(agents), Hash: snap.ConfigHash}}
	rec.Notes = append(rec.Notes, "sessions from an arrivals file: where each really ran is not known, so placements are not compared")
	if open > 0 {
		// The file does not say when it was exported: what ran after its
		// last time is not known, and is not made up.
		n := fmt.Sprintf("%d session(s) with no end run to the file's last start or end (%s) and no later: the file does not say when it was made, so their time after it is not counted",
			open, rec.To.UTC().Format("2006-01-02 15:04:05 UTC"))
		if none > 0 {
			n += fmt.Sprintf(" (%d of them start at that time and count for none)", none)
		}
		rec.Notes = append(rec.Notes, n)
	}
	rec.Notes = append(rec.Notes, unlisted(rec, true)...)
	if snap.Allocator.QuantumUnknown() {
		rec.Notes = append(rec.Notes, QuantumNote)
	}
	return rec
}

// truncRaw is a JSON value for an error's words, cut at 40 bytes.
func truncRaw(raw json.RawMessage) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// duplicateKey finds a key given twice in one object of a JSON value
// (at any depth), reading it token by token.
func duplicateKey(data string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(data))
	type level struct {
		obj  bool
		keys map[string]bool
		key  bool // the next token of an object is a key
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return k, true
				}
				top.keys[k] = true
				top.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{obj: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", false
			}
		}
		// A value ends: an object's next token is a key again.
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].key = true
		}
	}
}

// asSent is a request's count amount as the manager sends it to an agent:
// ResourceSlot.from_user_input quantizes it to 0.001 (CheckAmounts has
// refused a finer one) and normalises it, so "0.5000" arrives as 0.5 and
// the replay says 0.5, as a recorded kernel's SLOTS would. The fraction's
// trailing zeros are dropped, never a digit of value, and never into an
// exponent: Python's normalize() makes 10 "1E+1", where the SLOTS line
// (to_json) and an operator both write 10.
func asSent(v model.Dec) model.Dec {
	if v.Exponent() >= 0 {
		return v
	}
	n := v.Normalize()
	if n.Exponent() > 0 {
		q, err := n.Quantize(0, apd.RoundDown)
		if err != nil || !q.Equal(v) {
			return v
		}
		return q
	}
	return n
}
