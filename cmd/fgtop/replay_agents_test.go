package main

import (
	"testing"

	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/model"
)

// TestOtherAgentsKnowsEveryPartitionOfTheSpan: a record whose agents
// were renamed within its span knows the agents of the file it began
// under; only the latest partition's were compared, and that file was
// refused as another node's.
func TestOtherAgentsKnowsEveryPartitionOfTheSpan(t *testing.T) {
	rec := &replay.Record{Epochs: []replay.Epoch{
		{Agents: []model.Agent{{ID: "i-old-a"}, {ID: "i-old-b"}}},
		{Agents: []model.Agent{{ID: "i-new-a"}, {ID: "i-new-b"}}},
	}}
	if m := otherAgents("hist", rec, []model.AgentID{"i-old-a", "i-old-b"}); m != "" {
		t.Errorf("the span's first partition's agents refused: %s", m)
	}
	if m := otherAgents("hist", rec, []model.AgentID{"i-new-a", "i-new-b"}); m != "" {
		t.Errorf("the latest partition's agents refused: %s", m)
	}
	if m := otherAgents("hist", rec, []model.AgentID{"i-other"}); m == "" {
		t.Error("another node's agents accepted")
	}
}
