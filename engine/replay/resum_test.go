package replay

import (
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestHeldIsTheManagersResum: the manager counts what an agent's kernels
// hold afresh at each scheduling round, a sum of the kernels left
// (ScheduleDBSource._fetch_kernel_occupancy), not a running total taken
// back when one leaves: after 1.1 + 1.1 + 0.25 − 0.25 its count is 2.2,
// and the agent reports 0.3 free of 2.5, not 2.20 and 0.30. The peak of
// what its sessions ask at once is such a sum too: 2.7, not 2.70.
func TestHeldIsTheManagersResum(t *testing.T) {
	w := scriptedWeek(t)
	rec := loadWhole(t, w.reader())
	ss, err := ParseArrivals([]byte(`start,end,agent,slots
2026-11-23T01:00:00Z,2026-11-23T10:00:00Z,i-node-a,cuda.shares=1.1
2026-11-23T01:10:00Z,2026-11-23T10:00:00Z,i-node-a,cuda.shares=1.1
2026-11-23T01:20:00Z,2026-11-23T01:30:00Z,i-node-a,cuda.shares=0.25
2026-11-23T02:00:00Z,2026-11-23T03:00:00Z,i-node-a,cuda.shares=0.5
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ar := ArrivalsRecord(ss, &model.Snapshot{Node: rec.Node, Devices: rec.Devices}, rec.Settings, given(rec, map[model.AgentID]string{agentA: "2.5", agentB: "2.0"}))
	{
		res := Run(ar, ar.AsItWas(), Options{})
		if len(res.Refused) != 1 || res.Refused[0].Kernel != "line-5" {
			t.Fatalf("refused %+v", res.Refused)
		}
		want := "the manager would not send it there: the agent reports 0.3 cuda.shares free (given 2.5, its kernels hold 2.2), 0.5 requested"
		if got := res.Refused[0].Reason; got != want {
			t.Errorf("reason %q\nwant %q", got, want)
		}
		if st := slotOf(t, agentOf(t, res, agentA), model.SlotCUDAShares); st.Peak.String() != "2.7" {
			t.Errorf("a's cuda.shares peak %s, want 2.7 (1.1 + 1.1 + 0.5, the 0.25 gone)", st.Peak)
		}
	}
}
