package replay

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestForeignKnowsEveryPartitionOfTheSpan: a record whose agents were
// renamed within its span knows the agents of the file it began under
// (only the latest partition's were compared, and that file was refused
// as another node's); a config none of whose agents the record knows is
// named foreign, with both sets; nothing known is no verdict.
func TestForeignKnowsEveryPartitionOfTheSpan(t *testing.T) {
	rec := &Record{Epochs: []Epoch{
		{Agents: []model.Agent{{ID: "i-old-a"}, {ID: "i-old-b"}}},
		{Agents: []model.Agent{{ID: "i-new-a"}, {ID: "i-new-b"}}},
	}}
	for _, ids := range [][]model.AgentID{{"i-old-a", "i-old-b"}, {"i-new-a", "i-new-b"}, {"i-other", "i-new-b"}, nil} {
		if m := rec.Foreign(ids); m != "" {
			t.Errorf("%v refused: %s", ids, m)
		}
	}
	m := rec.Foreign([]model.AgentID{"i-other"})
	if !strings.Contains(m, "is of agents i-new-a, i-new-b, i-old-a, i-old-b; the config's are i-other: none in common") {
		t.Errorf("another node's agents: %q", m)
	}
	if m := (&Record{}).Foreign([]model.AgentID{"i-other"}); m != "" {
		t.Errorf("a record of no partition: %q", m)
	}
}
