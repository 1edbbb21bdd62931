package partition

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

var operator = agentconfig.Actor{Name: "alice", Origin: "cli", Role: agentconfig.RoleOperator}

func plan(t *testing.T, c *agentconfig.Config, snap *model.Snapshot, req Request) *Plan {
	t.Helper()
	d, errs := Draft(c, InventoryOf(snap), req)
	return Build(c, d, snap, errs...)
}

func TestApplyMoveFreeDevice(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices(), kernel("k1", agentB, gpu4, "0.50"))
	p := plan(t, c, snap, Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}})
	res, err := Apply(p, ApplyOptions{Actor: operator})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || !res.RestartNeeded {
		t.Errorf("result %+v", res)
	}
	got, _ := os.ReadFile(c.Path)
	old := bytes.Split(c.Raw, []byte("\n"))
	nu := bytes.Split(got, []byte("\n"))
	if len(old) != len(nu) {
		t.Fatalf("line count %d -> %d", len(old), len(nu))
	}
	var changed []int
	for i := range old {
		if !bytes.Equal(old[i], nu[i]) {
			changed = append(changed, i+1)
			if !bytes.HasPrefix(nu[i], []byte("  devices = { cuda = [")) {
				t.Errorf("line %d changed: %q", i+1, nu[i])
			}
		}
	}
	if len(changed) != 2 {
		t.Errorf("changed lines %v, want the two device lists", changed)
	}
	recs, _, _ := agentconfig.ReadJournal(agentconfig.JournalPath(c.Path))
	if len(recs) != 1 || !strings.Contains(string(recs[0].Plan), `"device":"cuda:`+gpu3+`"`) || recs[0].Result != "ok" {
		t.Errorf("journal %+v", recs)
	}
	// Rollback restores the original bytes exactly.
	if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: c.Path, Actor: operator}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
		t.Error("rollback did not restore the original bytes")
	}
}

func TestApplyRefusals(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices(), kernel("k1", agentB, gpu4, "0.50"))
	unchanged := func(t *testing.T) {
		t.Helper()
		if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, c.Raw) {
			t.Fatal("a refused apply changed the file")
		}
	}
	held := plan(t, c, snap, Request{Moves: []Move{{Device: "cuda:" + gpu4, Agent: agentA}}})
	if _, err := Apply(held, ApplyOptions{Actor: operator}); !errors.Is(err, ErrLiveKernels) || !strings.Contains(err.Error(), "kernel k1 of agent i-gpu-node01-numa1 holds 0.50 cuda.shares on cuda:"+gpu4) {
		t.Errorf("held device: err = %v", err)
	}
	unchanged(t)
	for _, role := range []agentconfig.Role{agentconfig.RoleViewer, ""} {
		free := plan(t, c, snap, Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}})
		if _, err := Apply(free, ApplyOptions{Actor: agentconfig.Actor{Name: "v", Role: role}, Force: true}); !errors.Is(err, agentconfig.ErrNotAllowed) {
			t.Errorf("role %q: err = %v", role, err)
		}
	}
	unchanged(t)
	bad := plan(t, c, snap, Request{Moves: []Move{{Device: "cuda:nope", Agent: agentB}}})
	if _, err := Apply(bad, ApplyOptions{Actor: operator, Force: true}); !errors.Is(err, ErrInvalidPlan) || !strings.Contains(err.Error(), "Unknown device 'cuda:nope': no device on this node has that ID or name") {
		t.Errorf("invalid: err = %v", err)
	}
	none := plan(t, c, snap, Request{})
	if _, err := Apply(none, ApplyOptions{Actor: operator}); !errors.Is(err, ErrNoChange) {
		t.Errorf("no change: err = %v", err)
	}
	unchanged(t)
	// The file changes after the plan was made.
	free := plan(t, c, snap, Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}})
	edited := append(bytes.Clone(c.Raw), "# edited\n"...)
	os.WriteFile(c.Path, edited, 0o640)
	if _, err := Apply(free, ApplyOptions{Actor: operator}); !errors.Is(err, agentconfig.ErrChangedOnDisk) {
		t.Errorf("changed on disk: err = %v", err)
	}
	if b, _ := os.ReadFile(c.Path); !bytes.Equal(b, edited) {
		t.Error("refused apply touched the edited file")
	}
}

func TestApplyForced(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices(), kernel("k1", agentB, gpu4, "0.50"))
	p := plan(t, c, snap, Request{Moves: []Move{{Device: "cuda:" + gpu4, Agent: agentA}}})
	res, err := Apply(p, ApplyOptions{Actor: operator, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Record.Forced || !res.Verified {
		t.Errorf("record %+v", res.Record)
	}
	back, err := agentconfig.Load(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Now the kernel is drift: its agent no longer owns the GPU.
	issues := Drift(Effective(back, InventoryOf(snap)), snap)
	if len(issues) != 1 || issues[0].Code != model.IssueDriftNotOwner {
		t.Errorf("drift after forced apply: %v", issues)
	}
}

func TestApplyReportsMismatch(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	p := plan(t, c, snap, Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}})
	// Pretend the plan promised something the file does not say.
	p.Next.Agents[0].Mem = model.NewDec(1, 0)
	res, err := Apply(p, ApplyOptions{Actor: operator})
	if err == nil || res == nil || res.Verified || !strings.Contains(err.Error(), "does not give the planned partition") {
		t.Fatalf("res %+v err %v", res, err)
	}
	if res.Record.Result != "mismatch" || len(res.Mismatch) != 1 || !strings.Contains(res.Mismatch[0], "agent i-gpu-node01-numa0: mem 128849018880, planned 1") {
		t.Errorf("mismatch %q, record %s", res.Mismatch, res.Record.Result)
	}
}
