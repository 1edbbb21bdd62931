package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/history/histtext"
	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model/names"
)

// MaxHistoryBody is the longest history document read from one node: a
// busy node's week is a few MiB.
const MaxHistoryBody = 64 << 20

// FleetHistorySchema names the JSON layout of `fgtop fleet history --json`.
const FleetHistorySchema = "fgtop.fleet-history/v1"

// HistoryQuery is what `fgtop fleet history` asks every node's record.
type HistoryQuery struct {
	Device, Kernel, User string
	// Since and Until bound the span (zero: open).
	Since, Until time.Time
}

// NewHistoryQuery is the query of `fgtop fleet history` for the ids
// given: exactly one of device, kernel and user.
func NewHistoryQuery(device, kernel, user string) (HistoryQuery, error) {
	n := 0
	for _, v := range []string{device, kernel, user} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return HistoryQuery{}, errors.New("fleet history: name one of --device ID, --kernel ID, --user ID")
	}
	return HistoryQuery{Device: device, Kernel: kernel, User: user}, nil
}

// SetSpan bounds the query by --since and --until as typed (any form
// history.ParseWhen takes, read against now; "" leaves that end open).
func (q *HistoryQuery) SetSpan(since, until string, now time.Time) error {
	var err error
	if since != "" {
		if q.Since, err = history.ParseWhen(since, now); err != nil {
			return fmt.Errorf("--since: %w", err)
		}
	}
	if until != "" {
		if q.Until, err = history.ParseWhen(until, now); err != nil {
			return fmt.Errorf("--until: %w", err)
		}
	}
	return history.SpanOrder(q.Since, q.Until, until, now)
}

// command is the query as the node's exec command. The ids go over SSH as
// words: one with a space or a quote cannot be asked that way.
func (q HistoryQuery) command() (string, error) {
	parts := []string{"history", "--json"}
	// A device's label is read with its spaces ignored (names.Resolve:
	// "MIG4/0" is "MIG 4/0"), so the console's name goes without them;
	// it was refused as an id with blanks.
	dev := strings.ReplaceAll(q.Device, " ", "")
	for _, f := range [...]struct{ flag, v string }{{"--device", dev}, {"--kernel", q.Kernel}, {"--user", q.User}} {
		if f.v == "" {
			continue
		}
		if strings.ContainsAny(f.v, " \t\r\n'\"\\") || len(f.v) > 256 {
			return "", fmt.Errorf("%s %q: an id with blanks or quotes cannot be asked over SSH", f.flag, f.v)
		}
		parts = append(parts, f.flag, f.v)
	}
	if !q.Since.IsZero() {
		parts = append(parts, "--since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		parts = append(parts, "--until", q.Until.UTC().Format(time.RFC3339Nano))
	}
	return strings.Join(parts, " "), nil
}

// HistoryInterval is one kernel's hold on one device, on one node.
// Its fields are the node's own `history --json` row (histtext.Interval).
type HistoryInterval struct {
	Node string `json:"node"`
	histtext.Interval

	from time.Time
}

// HistoryGap is a stretch of the asked span a node's record lacks.
type HistoryGap struct {
	Node string `json:"node"`
	From string `json:"from"`
	To   string `json:"to"`
	Why  string `json:"why"`
	// OpenEnded: from From on, its end lost with it (a damaged last
	// segment); To is the end of what was asked.
	OpenEnded bool `json:"open_ended,omitempty"`
}

// HistoryProblem is a node that did not answer, or whose record lacks
// part of the asked span, in its words.
type HistoryProblem struct {
	Node  string `json:"node"`
	Error string `json:"error"`

	// partial: the node answered, with words beside its rows, so it is
	// not one that gave nothing.
	partial bool
}

// FleetHistory is the fleet's answer, merged by time.
type FleetHistory struct {
	Schema    string            `json:"schema"`
	Intervals []HistoryInterval `json:"intervals"`
	Missing   []HistoryGap      `json:"missing"`
	Problems  []HistoryProblem  `json:"problems"`
	// NotFound are the nodes whose record does not know the name asked
	// (a kernel, user or device of another node), in their words: not a
	// part of the span unknown.
	NotFound []HistoryProblem `json:"not_found"`

	// asked is how many nodes were asked (0: not known), so that an
	// empty answer is not read as "nothing held" when no node answered.
	asked int
}

// NowhereError is a name no node's record knows: every node said so.
type NowhereError struct {
	Nodes []HistoryProblem
}

func (e *NowhereError) Error() string {
	parts := make([]string, len(e.Nodes))
	for i, n := range e.Nodes {
		parts[i] = n.Node + ": " + n.Error
	}
	return "no node's record knows it: " + strings.Join(parts, "; ")
}

// AmbiguousError is a name that is a prefix of several on some node: the
// asker must give more of it, as `history` on one node says (exit 2); the
// other nodes' answers would be for a name the asker did not mean.
type AmbiguousError struct {
	Nodes []HistoryProblem
}

func (e *AmbiguousError) Error() string {
	parts := make([]string, len(e.Nodes))
	for i, n := range e.Nodes {
		parts[i] = n.Node + ": " + n.Error
	}
	return strings.Join(parts, "; ")
}

// notHereError is a node's refusal of a query for a name its record does
// not know, or knows several of (exit status 2, in model/names' words:
// the status alone is any usage error, a flag a node of another version
// does not know among them, and that is not "the name is not here").
type notHereError struct{ msg string }

func (e *notHereError) Error() string { return e.msg }

// Incomplete reports whether part of the asked span is not known: a node
// did not answer, or its record lacks part of it.
func (h *FleetHistory) Incomplete() bool { return len(h.Missing) > 0 || len(h.Problems) > 0 }

// silent counts the nodes that gave nothing: a node that answered with
// words beside its rows is not one of them.
func (h *FleetHistory) silent() int {
	n := 0
	for _, p := range h.Problems {
		if !p.partial {
			n++
		}
	}
	return n
}

// Shortfall says what of the asked span is not known, after the listing
// that names it; nil when the answer is complete.
func (h *FleetHistory) Shortfall() error {
	if !h.Incomplete() {
		return nil
	}
	var parts []string
	if n := h.silent(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d node(s) did not answer", n))
	}
	if n := len(h.Problems) - h.silent(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d node(s) did not answer fully", n))
	}
	parts = append(parts, fmt.Sprintf("%d gap(s)", len(h.Missing)))
	return fmt.Errorf("part of the asked span is not known: %s (listed above)", strings.Join(parts, ", "))
}

// WriteHistory writes the fleet's answer as `fgtop fleet history` prints
// it: the JSON document (FleetHistorySchema), or a table of the rows in
// time order, each naming its node, then the stretches the records lack
// and the nodes that did not answer. The table cuts UUIDs as `history`
// does (histtext.Abbrev) unless full (--no-trunc).
func WriteHistory(w io.Writer, h *FleetHistory, asJSON, full bool) error {
	if asJSON {
		b, err := report.Marshal(h, true)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	// Ids cut as each node's own history table cuts them, over the
	// fleet's rows: two kernels of two nodes never read as one.
	var cut [3]int
	if !full {
		cut = histtext.AbbrevRows(len(h.Intervals), func(i int) [3]string {
			iv := &h.Intervals[i]
			return [3]string{iv.Kernel, iv.Session, iv.User}
		})
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "FROM\tTO\tNODE\tDEVICE\tAMOUNT\tKERNEL\tSESSION\tUSER\tAGENT")
	for _, iv := range h.Intervals {
		from, to := iv.From, iv.To
		if iv.Since {
			from = "<" + from
		}
		if iv.Open {
			to = "open"
		} else if iv.Gone {
			to += "?"
		}
		am := make([]string, 0, len(iv.Amounts))
		for s, v := range iv.Amounts {
			am = append(am, s+"="+v)
		}
		slices.Sort(am)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", from, to, iv.Node, iv.Device, strings.Join(am, ","), histtext.CutUUID(iv.Kernel, cut[0]),
			cmp.Or(histtext.CutUUID(iv.Session, cut[1]), "-"), cmp.Or(histtext.CutUUID(iv.User, cut[2]), "-"), cmp.Or(iv.Agent, "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	if len(h.Intervals) == 0 {
		// "Nothing held" is a claim only the nodes that answered make.
		switch silent := h.silent(); {
		case silent == 0:
			b.WriteString("(nothing held in the asked span)\n")
		case h.asked > 0 && silent >= h.asked:
			b.WriteString("(no node answered: what was held is not known)\n")
		case h.asked > 0:
			fmt.Fprintf(&b, "(nothing held in the asked span on the nodes that answered (%d of %d))\n", h.asked-silent, h.asked)
		default:
			fmt.Fprintf(&b, "(nothing held in the asked span on the nodes that answered; %d node(s) did not answer)\n", silent)
		}
	}
	for _, m := range h.Missing {
		if m.OpenEnded {
			fmt.Fprintf(&b, "missing: %s from %s on: %s\n", m.Node, m.From, m.Why)
			continue
		}
		fmt.Fprintf(&b, "missing: %s %s to %s: %s\n", m.Node, m.From, m.To, m.Why)
	}
	for _, p := range h.Problems {
		fmt.Fprintf(&b, "no answer: %s: %s\n", p.Node, p.Error)
	}
	for _, p := range h.NotFound {
		fmt.Fprintf(&b, "not in its record: %s: %s\n", p.Node, p.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// nodeHistory is what one node's `history --json` holds that the fleet
// reads (fgtop.history/v1).
type nodeHistory struct {
	Schema    string            `json:"schema"`
	Intervals []HistoryInterval `json:"intervals"`
	Missing   []HistoryGap      `json:"missing"`
}

// ParseNodeHistory reads one node's fgtop.history/v1 document, every
// text in it cleaned as outside text, each row named node.
func ParseNodeHistory(node string, b []byte) ([]HistoryInterval, []HistoryGap, error) {
	if len(b) > MaxHistoryBody {
		return nil, nil, fmt.Errorf("a history document longer than %d MiB", MaxHistoryBody>>20)
	}
	var d nodeHistory
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, nil, fmt.Errorf("bad history document: %w", err)
	}
	if d.Schema != "fgtop.history/v1" {
		return nil, nil, fmt.Errorf("history document of schema %q, want fgtop.history/v1", untrusted.Text(d.Schema))
	}
	clean := untrusted.Text
	for i := range d.Intervals {
		iv := &d.Intervals[i]
		iv.Node = node
		iv.Device, iv.Kernel, iv.Agent, iv.Session = clean(iv.Device), clean(iv.Kernel), clean(iv.Agent), clean(iv.Session)
		iv.User, iv.Project, iv.From, iv.To = clean(iv.User), clean(iv.Project), clean(iv.From), clean(iv.To)
		am := make(map[string]string, len(iv.Amounts))
		for k, v := range iv.Amounts {
			am[clean(k)] = clean(v)
		}
		iv.Amounts = am
		t, err := time.Parse(time.RFC3339Nano, iv.From)
		if err != nil {
			return nil, nil, fmt.Errorf("bad history row: from %q", iv.From)
		}
		iv.from = t
	}
	for i := range d.Missing {
		m := &d.Missing[i]
		m.Node, m.From, m.To, m.Why = node, clean(m.From), clean(m.To), clean(m.Why)
	}
	return d.Intervals, d.Missing, nil
}

// HistoryHosts asks every node's record at once and merges the answers
// by time (then node, then device), each row naming its node. A node
// that did not answer, or answered with a problem it lists no gap for
// (the span outside its record), is in Problems with its words; its
// record's gaps in the span (and the stretch before it began) are in
// Missing.
func HistoryHosts(ctx context.Context, hosts []string, cfg *gossh.ClientConfig, o SSHOptions, q HistoryQuery) (*FleetHistory, error) {
	cmd, err := q.command()
	if err != nil {
		return nil, err
	}
	o = o.withDefaults()
	type answer struct {
		ivs     []HistoryInterval
		gaps    []HistoryGap
		prob    string
		partial bool
		notHere string
	}
	answers := make([]answer, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, problem, err := execAll(ctx, h, cfg, o, cmd, MaxHistoryBody)
			a := &answers[i]
			var nh *notHereError
			if errors.As(err, &nh) {
				a.notHere = untrusted.Text(nh.msg)
				return
			}
			if err != nil {
				a.prob = untrusted.Text(err.Error())
				return
			}
			ivs, gaps, err := ParseNodeHistory(h, out)
			if err != nil {
				a.prob = untrusted.Text(err.Error())
				return
			}
			a.ivs, a.gaps = ivs, gaps
			if len(gaps) == 0 {
				// What it says beside an answer with no gap (the span
				// outside its record) is a problem; words beside its
				// gaps are about them, and they are in Missing.
				a.prob = untrusted.Text(problem)
				a.partial = true
			}
		}()
	}
	wg.Wait()
	fh := &FleetHistory{Schema: FleetHistorySchema, Intervals: []HistoryInterval{}, Missing: []HistoryGap{}, Problems: []HistoryProblem{}, NotFound: []HistoryProblem{},
		asked: len(hosts)}
	for i, a := range answers {
		fh.Intervals = append(fh.Intervals, a.ivs...)
		fh.Missing = append(fh.Missing, a.gaps...)
		if a.prob != "" {
			fh.Problems = append(fh.Problems, HistoryProblem{Node: hosts[i], Error: a.prob, partial: a.partial})
		}
		if a.notHere != "" {
			fh.NotFound = append(fh.NotFound, HistoryProblem{Node: hosts[i], Error: a.notHere})
		}
	}
	var amb []HistoryProblem
	for _, p := range fh.NotFound {
		// The node's own words (model/names.AmbiguousError): its exit
		// status 2 says only "the asker's to fix".
		if strings.Contains(p.Error, " is ambiguous: it names ") {
			amb = append(amb, p)
		}
	}
	if len(amb) > 0 {
		return nil, &AmbiguousError{Nodes: amb}
	}
	if len(hosts) > 0 && len(fh.NotFound) == len(hosts) {
		return nil, &NowhereError{Nodes: fh.NotFound}
	}
	slices.SortStableFunc(fh.Intervals, func(a, b HistoryInterval) int {
		return cmp.Or(a.from.Compare(b.from), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Device, b.Device), cmp.Compare(a.Kernel, b.Kernel))
	})
	return fh, nil
}

// execAll runs cmd on the node and reads all it answers, at most limit
// bytes. A refusal with nothing on stdout is the error; what the node
// says on stderr beside an answer (exit 1: the record lacks part of the
// span) is problem.
func execAll(ctx context.Context, addr string, cfg *gossh.ClientConfig, o SSHOptions, cmd string, limit int64) (out []byte, problem string, err error) {
	rc, err := startCmd(ctx, addr, cfg, o, cmd)
	if err != nil {
		return nil, "", err
	}
	defer rc.close()
	out, rerr := io.ReadAll(io.LimitReader(rc.out, limit+1))
	// Never wait on a node that keeps writing: the exit status is read
	// only once its output ended within the limit.
	switch {
	case ctx.Err() != nil:
		return nil, "", unanswered(ctx, len(out))
	case int64(len(out)) > limit:
		return nil, "", fmt.Errorf("an answer longer than %d MiB", limit>>20)
	case rerr != nil:
		return nil, "", fmt.Errorf("read: %w", rerr)
	}
	werr := rc.sess.Wait()
	msg := strings.TrimSpace(rc.stderr.String())
	switch {
	case ctx.Err() != nil:
		return nil, "", unanswered(ctx, len(out))
	case len(out) == 0 && exitStatus(werr) == 2 && names.IsRefusal(msg):
		return nil, "", &notHereError{msg: msg}
	case len(out) == 0 && msg != "":
		return nil, "", errors.New(msg)
	case len(out) == 0:
		return nil, "", fmt.Errorf("the node closed the session without an answer (%v)", werr)
	}
	return out, msg, nil
}

// exitStatus is a remote command's exit status (0 when it exited well, -1
// when it did not say).
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *gossh.ExitError
	if errors.As(err, &ee) {
		return ee.ExitStatus()
	}
	return -1
}
