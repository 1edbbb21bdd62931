package engine

import (
	"testing"

	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// A restart state judged on another version of agent.toml is news even
// where its words are alike (two writes in one second): kept back, the
// console read the older version's "current" as the newer's, and its
// editor said no restart was needed for a version the agents do not run.
func TestRestartStateOfAnotherVersionIsNews(t *testing.T) {
	was := model.Restart{State: model.RestartCurrent, Detail: "agent process 7 started 2026-12-07 10:00:00, after agent.toml last changed (2026-12-07 09:00:00)", PIDs: []int{7}, ConfigHash: "aaaa"}
	now := was
	now.ConfigHash = "bbbb"
	if sameRestart(was, now) {
		t.Error("the restart poll keeps back a state of another version")
	}
	if !sameRestart(was, was) {
		t.Error("the restart poll resends the same state")
	}
	st := newState(&Options{Node: "n", Roots: []scratch.Root{{Path: "/r", Agent: "a"}}})
	if len(st.agents) == 0 {
		t.Fatal("no agent to hold a restart state")
	}
	st.setRestart(was)
	if !st.setRestart(now) {
		t.Error("setRestart: a state of another version changes nothing, so no snapshot carries it")
	}
	if got := st.restart[st.agents[0].base.ID].ConfigHash; got != "bbbb" {
		t.Errorf("agent's restart hash %q, want bbbb", got)
	}
}
