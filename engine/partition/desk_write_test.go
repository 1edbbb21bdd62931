package partition

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// TestDeskLatestWriteFollowsTheFile: a console's header said "agent.toml
// written 10:34 by root" after a CLI rollback at 10:35 and a CLI apply at
// 10:37 (the tour): the desk knew only its own writes. LatestWrite
// follows the journal, whoever wrote it, then a change fgtop did not
// make; and tells nothing of writes from before the desk was made, nor
// of an intent that wrote nothing.
func TestDeskLatestWriteFollowsTheFile(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	at := func(hm string) time.Time {
		t.Helper()
		v, err := time.ParseInLocation("2006-01-02 15:04", "2026-11-21 "+hm, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// A write from before the desk was made is not news.
	root := agentconfig.Actor{Name: "root", Origin: "cli", Role: agentconfig.RoleOperator}
	cliApply := func(hm string, req Request) {
		t.Helper()
		cur, err := agentconfig.Load(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Apply(plan(t, cur, snap, req), ApplyOptions{Actor: root, Now: func() time.Time { return at(hm) }}); err != nil {
			t.Fatal(err)
		}
	}
	cliApply("14:00", Request{Mem: []MemSet{{Agent: agentA, Bytes: model.NewDec(64<<30, 0)}}})
	d := newTestDesk(t, c.Path, snap) // its clock: 14:02:04 on
	if w, ok := d.LatestWrite(); ok {
		t.Fatalf("an apply from before the desk: %v", w)
	}

	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Apply(alice.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}), false); err != nil {
		t.Fatal(err)
	}
	alice.Close()
	mine, _ := d.LastWrite()
	if w, ok := d.LatestWrite(); !ok || w != mine {
		t.Fatalf("after the desk's own apply: %v %v, want %v", w, ok, mine)
	}

	cliApply("14:35", Request{Mem: []MemSet{{Agent: agentA, Bytes: model.NewDec(32<<30, 0)}}})
	if w, ok := d.LatestWrite(); !ok || w.Actor.Name != "root" || !w.Since.Equal(at("14:35")) || w.Rollback {
		t.Errorf("after a CLI apply: %v %v, want root at 14:35", w, ok)
	}
	if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: c.Path, Actor: root, Now: func() time.Time { return at("14:37") }}); err != nil {
		t.Fatal(err)
	}
	if w, ok := d.LatestWrite(); !ok || w.Actor.Name != "root" || !w.Since.Equal(at("14:37")) || !w.Rollback {
		t.Errorf("after a CLI rollback: %+v %v, want root's rollback at 14:37", w, ok)
	}
	if w, _ := d.LastWrite(); w != mine {
		t.Errorf("LastWrite, the desk's own, is %v", w)
	}

	// An apply that journaled its intent and then failed (or was killed)
	// before the rename wrote nothing: the latest write is still the
	// rollback, not a change outside fgtop.
	raw, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	intent, err := json.Marshal(agentconfig.JournalRecord{Time: at("14:38"), Action: agentconfig.ActionIntent, Intends: "apply",
		Actor: "bob", Origin: "cli", Role: agentconfig.RoleOperator, Config: c.Path, OldHash: hex.EncodeToString(sum[:]), NewHash: strings.Repeat("f", 64)})
	if err != nil {
		t.Fatal(err)
	}
	j, err := os.OpenFile(d.JournalPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Write(append(intent, '\n')); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if w, ok := d.LatestWrite(); !ok || w.Actor.Name != "root" || !w.Since.Equal(at("14:37")) {
		t.Errorf("after an intent that wrote nothing: %v %v, want root at 14:37", w, ok)
	}

	// An editor's save: no journal line, a file fgtop did not leave.
	if err := os.WriteFile(c.Path, append(raw, "\n# by hand\n"...), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(c.Path, at("14:40"), at("14:40")); err != nil {
		t.Fatal(err)
	}
	if w, ok := d.LatestWrite(); !ok || w.Actor.Name != "" || !w.Since.Equal(at("14:40")) {
		t.Errorf("after a change outside fgtop: %v %v, want no name at 14:40", w, ok)
	}
}

// TestDeskIgnoresAWriteThatFailedAfterItsIntent: a CLI apply whose rename
// failed after its intent was journaled now completes the intent with a
// failed record. That record is no write: the console's header and the
// editor (whose draft goes stale on a write by another hand) still name
// the write before it, or none; a draft held meanwhile stays fresh; the
// journal view lists it, and no intent is left pending.
func TestDeskIgnoresAWriteThatFailedAfterItsIntent(t *testing.T) {
	at := func(hm string) time.Time {
		v, _ := time.ParseInLocation("2006-01-02 15:04", "2026-11-21 "+hm, time.Local)
		return v
	}
	root := agentconfig.Actor{Name: "root", Origin: "cli", Role: agentconfig.RoleOperator}
	for _, tc := range []struct {
		name  string
		apply bool // a real CLI apply at 14:35 comes first
	}{
		{"nothing written since the desk", false},
		{"after a CLI apply", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loadFixture(t, "agent.multi-agent.device-based.toml")
			snap := snapshot(fixtureDevices())
			d := newTestDesk(t, c.Path, snap)
			commit := func(hm string, hooks *agentconfig.Hooks) error {
				t.Helper()
				raw, err := os.ReadFile(c.Path)
				if err != nil {
					t.Fatal(err)
				}
				_, err = agentconfig.Commit(agentconfig.CommitRequest{Path: c.Path, BaseHash: agentconfig.HashOf(raw), Data: append(raw, "\n# "+hm+"\n"...),
					Actor: root, Now: func() time.Time { return at(hm) }, Hooks: hooks})
				return err
			}
			if tc.apply {
				if err := commit("14:35", nil); err != nil {
					t.Fatal(err)
				}
			}
			sess, err := d.Open(operator, false)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			before, bok := d.LatestWrite()

			// The temp file taken away at the intent: the rename fails.
			err = commit("14:38", &agentconfig.Hooks{Fault: func(s agentconfig.Step) error {
				if s == agentconfig.StepIntent {
					tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(c.Path), ".agent.toml.fgtop-tmp-*"))
					for _, p := range tmps {
						os.Remove(p)
					}
				}
				return nil
			}})
			if err == nil || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("the failing apply: %v", err)
			}
			w, ok := d.LatestWrite()
			if ok != tc.apply || ok != bok || w != before {
				t.Errorf("LatestWrite after a failed apply: %+v %v, want %+v %v (the write before it)", w, ok, before, bok)
			}
			if tc.apply && (w.Actor.Name != "root" || !w.Since.Equal(at("14:35"))) {
				t.Errorf("LatestWrite %+v, want root's apply at 14:35", w)
			}
			raw, _ := os.ReadFile(c.Path)
			if err := sess.Stale(agentconfig.HashOf(raw)); err != nil {
				t.Errorf("the draft went stale on a write that wrote nothing: %v", err)
			}
			recs, _, err := d.Journal(0)
			if err != nil || len(recs) == 0 {
				t.Fatalf("journal %v, %v", recs, err)
			}
			if recs[0].Action != agentconfig.ActionFailed || recs[0].Intends != agentconfig.ActionApply || !recs[0].Time.Equal(at("14:38")) {
				t.Errorf("the journal's newest record is %+v, want the failed apply", recs[0])
			}
			for _, r := range recs {
				if r.Action == agentconfig.ActionIntent {
					t.Errorf("an intent is left pending: %+v", r)
				}
			}
		})
	}
}
