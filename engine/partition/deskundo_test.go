package partition

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// TestDeskUndoApplyIsTheOneShown: a rollback through the desk undoes the
// apply its preview showed, or nothing: after another apply (here from
// the command line) it is refused (ErrUndoMoved) and the file is as that
// apply left it; previewed again, it undoes the newer one, byte for byte.
func TestDeskUndoApplyIsTheOneShown(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	d := newTestDesk(t, c.Path, snap)
	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Apply(alice.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}), false); err != nil {
		t.Fatal(err)
	}
	pv, err := alice.PreviewRollback()
	if err != nil || pv.Undoes == nil || pv.Judgement.Refusal != "" {
		t.Fatalf("preview %+v, %v", pv, err)
	}
	// Another hand applies meanwhile.
	cur, err := agentconfig.Load(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	root := agentconfig.Actor{Name: "root", Origin: "cli", Role: agentconfig.RoleOperator}
	if _, err := Apply(plan(t, cur, snap, Request{Mem: []MemSet{{Agent: agentA, Bytes: model.NewDec(64<<30, 0)}}}),
		ApplyOptions{Actor: root, Now: func() time.Time { return time.Date(2026, 11, 21, 15, 0, 0, 0, time.Local) }}); err != nil {
		t.Fatal(err)
	}
	afterRoot, _ := os.ReadFile(c.Path)
	if err := alice.Review(); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.UndoApply(pv.Undoes); !errors.Is(err, ErrUndoMoved) {
		t.Fatalf("undo of an apply no longer the last: %v, want ErrUndoMoved", err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(afterRoot) {
		t.Fatal("a refused undo wrote the file")
	}
	pv, err = alice.PreviewRollback()
	if err != nil || pv.Undoes.Actor != "root" {
		t.Fatalf("preview after root's apply: %+v, %v", pv, err)
	}
	if _, err := alice.UndoApply(pv.Undoes); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(cur.Raw) {
		t.Error("the undo did not restore the file as root's apply found it")
	}
}

// TestDeskUndoApplyAnotherProcessInBetween: an apply by another process
// (`fgtop apply` from a shell) that lands after the desk judged the
// rollback but before the writer takes the journal's lock is not undone
// in its stead: the rollback is refused (ErrUndoMoved) and the file is as
// that apply left it. The writer undid whatever apply was last by then,
// one nobody was shown and the live kernels were not judged against.
func TestDeskUndoApplyAnotherProcessInBetween(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	var meanwhile func()
	clock := time.Date(2026, 11, 21, 14, 2, 3, 0, time.Local)
	d := NewDesk(DeskOptions{Config: c.Path, Snapshot: func() *model.Snapshot {
		if f := meanwhile; f != nil {
			meanwhile = nil
			f()
		}
		return snap
	}, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Apply(alice.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}), false); err != nil {
		t.Fatal(err)
	}
	pv, err := alice.PreviewRollback()
	if err != nil || pv.Undoes == nil || pv.Judgement.Refusal != "" {
		t.Fatalf("preview %+v, %v", pv, err)
	}
	var afterRoot []byte
	// The desk judges the rollback against the snapshot last, before the
	// write: the other process's apply lands then.
	meanwhile = func() {
		cur, err := agentconfig.Load(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		root := agentconfig.Actor{Name: "root", Origin: "cli", Role: agentconfig.RoleOperator}
		if _, err := Apply(plan(t, cur, snap, Request{Mem: []MemSet{{Agent: agentA, Bytes: model.NewDec(64<<30, 0)}}}),
			ApplyOptions{Actor: root, Now: func() time.Time { return clock.Add(time.Hour) }}); err != nil {
			t.Fatal(err)
		}
		afterRoot, _ = os.ReadFile(c.Path)
	}
	if _, err := alice.UndoApply(pv.Undoes); !errors.Is(err, ErrUndoMoved) {
		t.Errorf("undo with another apply landed before the write: %v, want ErrUndoMoved", err)
	}
	if afterRoot == nil {
		t.Fatal("the other apply was not made")
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(afterRoot) {
		t.Error("the rollback undid an apply it was not shown")
	}
}

// TestDeskUndoBeforeTheFirstScan: with no snapshot yet no live kernel is
// known, so the rollback is refused as `fgtop rollback` refuses a node it
// could not scan, not let through over kernels nobody has seen.
func TestDeskUndoBeforeTheFirstScan(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	d := NewDesk(DeskOptions{Config: c.Path, Snapshot: func() *model.Snapshot { return snap }})
	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Apply(alice.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}), false); err != nil {
		t.Fatal(err)
	}
	applied, _ := os.ReadFile(c.Path)
	snap = nil
	pv, err := alice.PreviewRollback()
	if err != nil || pv.Judgement.Refusal == "" {
		t.Fatalf("preview before a scan: %+v, %v; want a refusal", pv, err)
	}
	if _, err := alice.UndoApply(pv.Undoes); !errors.Is(err, ErrLiveKernels) {
		t.Errorf("undo before a scan: %v, want ErrLiveKernels", err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(applied) {
		t.Error("a refused undo wrote the file")
	}
}
