package replay

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// TestNode: the node's side of a suggestion and of an arrivals replay,
// on the scripted week's node and record.
func TestNode(t *testing.T) {
	w := scriptedWeek(t)
	snap := w.live.Eng.Latest()
	rec := loadWhole(t, w.reader())
	parse := func(text string) *agentconfig.Config {
		t.Helper()
		cfg, err := agentconfig.Parse(w.config, []byte(text))
		if cfg == nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := parse(slotConfig("2.5", "1.5"))
	n := OnNode(cfg, snap)
	if err := n.Slotted(); err != nil {
		t.Errorf("the week's slot-based manual file: %v", err)
	}
	if why := n.Foreign(rec); why != "" {
		t.Errorf("the week's own record is foreign: %s", why)
	}
	// Today's amounts serve every session: no change is suggested.
	flags, sg, err := n.Suggest(rec)
	if err != nil || !sg.AllServed || len(flags) != 0 {
		t.Errorf("suggest: flags %v, all served %v (%v)", flags, sg != nil && sg.AllServed, err)
	}

	other := OnNode(parse(strings.ReplaceAll(slotConfig("2.5", "1.5"), "i-node-", "i-other-")), snap)
	if why := other.Foreign(rec); !strings.Contains(why, "none in common") {
		t.Errorf("another node's config: foreign %q", why)
	}
	// A file with no allocation tables gives its agents no amounts.
	shared := OnNode(parse(strings.ReplaceAll(strings.Split(slotConfig("1", "1"), "\n[[agents]]")[0], `"manual"`, `"shared"`)), snap)
	if err := shared.Slotted(); err == nil || !strings.Contains(err.Error(), "gives its agents no amounts") || !strings.Contains(err.Error(), w.config) {
		t.Errorf("a shared file: %v", err)
	}

	for _, tt := range []struct {
		name, in, err string
	}{
		{"one session of a known agent", "2026-11-23T03:00:00Z,2026-11-23T04:00:00Z,i-node-a,cuda.shares=0.5\n", ""},
		{"an agent the node lacks", "2026-11-23T03:00:00Z,,i-nobody,cuda.shares=0.5\n", "i-nobody"},
		{"a slot the node lacks", "2026-11-23T03:00:00Z,,i-node-a,rocm.device=1\n", "rocm.device"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sessions, err := ParseArrivals([]byte(tt.in), nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := n.Arrivals(sessions)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one naming %q", err, tt.err)
				}
				return
			}
			if err != nil || len(r.Sessions) != 1 {
				t.Fatalf("record %v (%v)", r, err)
			}
		})
	}

	// Judged without a proposal: the fidelity run, whose text is the
	// report's alone.
	doc := Judge(rec, nil, nil, WordFor(false))
	if doc.Proposal || !doc.ServesAll {
		t.Errorf("fidelity run: proposal %v, serves all %v", doc.Proposal, doc.ServesAll)
	}
	var a, b bytes.Buffer
	if err := WriteJudged(&a, nil, nil, nil, doc); err != nil {
		t.Fatal(err)
	}
	doc.WriteText(&b)
	if a.String() != b.String() {
		t.Errorf("WriteJudged without a suggestion or a plan:\n%s\nwant\n%s", a.String(), b.String())
	}
	if ProposalOf(rec, nil) != nil {
		t.Error("a proposal without a plan")
	}
}

func TestWordFor(t *testing.T) {
	if WordFor(true) != 0 || WordFor(false) != Printed {
		t.Errorf("WordFor: JSON %d, text %d", WordFor(true), WordFor(false))
	}
}
