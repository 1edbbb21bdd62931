package fleet

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFitJSONOnlyLiveNodesFit: --fit --json lists only live nodes in
// "fits". A stale or unreachable node whose last figures would take the
// request is "unknown", with its state and what those figures say; one
// without figures too.
func TestFitJSONOnlyLiveNodesFit(t *testing.T) {
	s := shortNode()
	sum := Summarize(s, Settings{})
	now := time.Unix(1000, 0)
	f := &Fleet{Time: now, Nodes: []Node{
		{Addr: "live", Name: "live", State: Live, LastSeen: now, Snap: s, Sum: sum},
		{Addr: "stale", Name: "stale", State: Stale, Reason: "target down; last scraped 4s ago", LastSeen: now.Add(-4 * time.Second), Snap: s, Sum: sum},
		{Addr: "dead", Name: "dead", State: Unreachable, Reason: "no answer for 22s", LastSeen: now.Add(-22 * time.Second), Snap: s, Sum: sum},
		{Addr: "never", Name: "never", State: Unreachable, Reason: "connection refused"},
	}}
	req, err := ParseRequest("cuda.shares=0.5")
	if err != nil {
		t.Fatal(err)
	}
	r := FitJSON(f, req, Settings{})
	if !slices.Equal(r.Fits, []string{"live"}) {
		t.Errorf("fits %v, want the live node alone", r.Fits)
	}
	for _, j := range r.Nodes[1:] {
		if j.Fit == nil || j.Fit.Fits || !j.Fit.Unknown || !strings.HasPrefix(j.Fit.Reason, "unknown: the node is "+string(j.State)) {
			t.Errorf("%s: fit %+v, want unknown", j.Node, j.Fit)
		}
	}
	if why := r.Nodes[1].Fit.Reason; !strings.Contains(why, "its last figures would take it on agent a1") {
		t.Errorf("stale: %q does not say what its last figures say", why)
	}
	if why := r.Nodes[3].Fit.Reason; !strings.Contains(why, "no snapshot") {
		t.Errorf("never answered: %q", why)
	}
}

// TestParseRequestNamesTypoFirst: a request that does not parse because a
// slot name is a typo says so, not that "4g" is not a decimal.
func TestParseRequestNamesTypoFirst(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"cpu=2,mme=4g", `unknown slot "mme": did you mean mem?`},
		{"cuda.shres=abc", `unknown slot "cuda.shres": did you mean cuda.shares?`},
		{"cuda.shares=abc", "invalid decimal"},
		{"rocm.device=abc", "invalid decimal"},
		{"cuda.shares", "want slot=amount"},
	} {
		_, err := ParseRequest(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.in, err, tt.want)
		}
		// The caller names the request (--fit "...": ); the error does
		// not say it again.
		if err != nil && strings.Contains(err.Error(), strconv.Quote(tt.in)) {
			t.Errorf("%q: %v repeats the request", tt.in, err)
		}
		// The fleet refuses free=N: its syntax error does not offer it.
		if err != nil && strings.Contains(err.Error(), "free=N") {
			t.Errorf("%q: %v offers free=N", tt.in, err)
		}
	}
}

// TestLargestFitOnlyOfLiveNodes: a node that is not live has no
// largest_fit in --once --json (null, left out) and "-" in the table:
// its last figure is not what fits on it now, as --fit says of it.
func TestLargestFitOnlyOfLiveNodes(t *testing.T) {
	s := shortNode()
	sum := Summarize(s, Settings{})
	now := time.Unix(1000, 0)
	f := &Fleet{Time: now, Nodes: []Node{
		{Addr: "live", Name: "live", State: Live, LastSeen: now, Snap: s, Sum: sum},
		{Addr: "stale", Name: "stale", State: Stale, LastSeen: now.Add(-4 * time.Second), Snap: s, Sum: sum},
		{Addr: "dead", Name: "dead", State: Unreachable, Reason: "no answer for 22s", LastSeen: now.Add(-22 * time.Second), Snap: s, Sum: sum},
	}}
	j := ToJSON(f)
	if j.Nodes[0].Largest == nil || !j.Nodes[0].Largest.Equal(sum.Largest) {
		t.Errorf("live: largest_fit %v, want %s", j.Nodes[0].Largest, sum.Largest)
	}
	for _, n := range j.Nodes[1:] {
		if n.Largest != nil {
			t.Errorf("%s (%s): largest_fit %s, want none", n.Node, n.State, n.Largest)
		}
	}
	var b strings.Builder
	WriteTable(&b, j)
	for _, l := range strings.Split(b.String(), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		want := "-"
		if f[0] == "live" {
			want = sum.Largest.String()
		}
		if f[5] != want {
			t.Errorf("LARGEST of %s: %q, want %q:\n%s", f[0], f[5], want, b.String())
		}
	}
}

// TestTableSaysTheMark: a node's mark (two addresses giving one name, a node
// that floods lines) is on its row of the --once table, after its address,
// as in the JSON's note: the table showed two live rows, exit status 1 and
// nothing to say why, the reason on stderr alone.
func TestTableSaysTheMark(t *testing.T) {
	s := shortNode()
	sum := Summarize(s, Settings{})
	now := time.Unix(1000, 0)
	note := "shares its name (gpu-a) with 10.0.0.2:2222: one node reached twice, or two nodes with one name; the totals count each"
	f := &Fleet{Time: now, Nodes: []Node{
		{Addr: "10.0.0.1:2222", Name: "gpu-a", State: Live, LastSeen: now, Snap: s, Sum: sum, Note: note},
		{Addr: "10.0.0.3:2222", Name: "10.0.0.3:2222", State: Unreachable, Reason: "not listening", Note: "floods lines"},
	}}
	var b strings.Builder
	WriteTable(&b, ToJSON(f))
	lines := strings.Split(b.String(), "\n")
	if !strings.HasSuffix(lines[1], "10.0.0.1:2222  "+note) {
		t.Errorf("the live row lacks its mark:\n%s", b.String())
	}
	if !strings.HasSuffix(lines[2], "10.0.0.3:2222  not listening; floods lines") {
		t.Errorf("the unreachable row lacks its mark after its error:\n%s", b.String())
	}
}
