package console

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestActorWhoNamesTheKey: over SSH the user name is the client's choice,
// so the header names the key beside it (the tour: "draft: olga" was
// whatever the operator typed); a local actor is its name alone.
func TestActorWhoNamesTheKey(t *testing.T) {
	for _, tc := range []struct {
		a    agentconfig.Actor
		want string
	}{
		{agentconfig.Actor{Name: "olga", Key: "SHA256:Ab3dE9xQzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"}, "olga key SHA256:Ab3dE9xQ"},
		{agentconfig.Actor{Name: "root"}, "root"},
		{agentconfig.Actor{Name: "x", Key: "SHA256:short"}, "x key SHA256:short"},
	} {
		if got := actorWho(tc.a); got != tc.want {
			t.Errorf("actorWho(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}

// TestHeaderFollowsTheLatestWrite: the header kept "agent.toml written
// 10:34 by root: restart agents" after a CLI rollback at 10:35 and a CLI
// apply at 10:37 (the tour): it names the latest write by any hand, and
// one fgtop did not make.
func TestHeaderFollowsTheLatestWrite(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	a := testApp(t, 120, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap)})
	header := func() string { return strings.Join(strings.Split(screen(a), "\n")[:2], "\n") }
	if strings.Contains(header(), "agent.toml written") {
		t.Fatalf("a write before any:\n%s", header())
	}
	at := func(hm string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", "2026-11-21 "+hm, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, hm := range []string{"10:35", "10:37"} {
		// A device moved back and forth: each a write of its own.
		owner := fake.Agent0
		if hm == "10:37" {
			owner = fake.Agent1
		}
		rootMoves(t, path, snap, owner, func() time.Time { return at(hm) })
		a.Update(kit.TickMsg{})
		if want := "agent.toml written " + hm + " by root: restart agents"; !strings.Contains(header(), want) {
			t.Errorf("after the CLI's apply at %s, the header lacks %q:\n%s", hm, want, header())
		}
	}
	raw := mustRead(t, path)
	if err := os.WriteFile(path, []byte(raw+"\n# by hand\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at("10:40"), at("10:40")); err != nil {
		t.Fatal(err)
	}
	a.Update(kit.TickMsg{})
	if want := "agent.toml written 10:40 outside fgtop: restart agents"; !strings.Contains(header(), want) {
		t.Errorf("after a change outside fgtop, the header lacks %q:\n%s", want, header())
	}
}

// TestHeaderNamesARollback: a rollback that gives the agents back the
// file they run leaves nothing to restart, and the header then said
// nothing at all: the operator whose apply another undid saw no change on
// their screen (the tour). It names the rollback, and asks for a restart
// only where one is due.
//
// A "current" judged on another version of the file (the one the write
// replaced, before the engine saw the write) is no news of this one.
func TestHeaderNamesARollback(t *testing.T) {
	for _, c := range []struct {
		restarted bool
		// judged: the version the agents' state was judged on ("" none
		// said, "file" the file as it is, "other" another).
		judged string
	}{{true, ""}, {false, ""}, {true, "file"}, {false, "other"}} {
		restarted := c.restarted
		path := fixtureConfig(t)
		snap := freeNode()
		state := model.RestartPending
		if restarted || c.judged == "other" {
			state = model.RestartCurrent
		}
		judged := map[string]string{"file": agentconfig.HashOf([]byte(mustRead(t, path))), "other": agentconfig.HashOf([]byte("# another version\n"))}[c.judged]
		for i := range snap.Agents {
			snap.Agents[i].Restart = model.Restart{State: state, ConfigHash: judged}
		}
		a := testApp(t, 160, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap)})
		header := func() string { return strings.Join(strings.Split(screen(a), "\n")[:2], "\n") }
		at := func(hm string) func() time.Time {
			return func() time.Time {
				v, err := time.ParseInLocation("2006-01-02 15:04", "2026-11-21 "+hm, time.Local)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		cur, err := agentconfig.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		draft, errs := partition.Draft(cur, partition.InventoryOf(snap), partition.Request{Moves: []partition.Move{{Device: "cuda:" + string(fake.GPU(4)), Agent: fake.Agent0}}})
		p := partition.Build(cur, draft, snap, errs...)
		if _, err := partition.Apply(p, partition.ApplyOptions{Actor: alice, Now: at("10:35")}); err != nil {
			t.Fatal(err)
		}
		carol := agentconfig.Actor{Name: "carol", Origin: "cli", Role: agentconfig.RoleOperator}
		if _, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: path, Actor: carol, Now: at("10:36")}); err != nil {
			t.Fatal(err)
		}
		a.Update(kit.TickMsg{})
		want := "agent.toml rolled back 10:36 by carol"
		if !restarted {
			want += ": restart agents"
		}
		if h := header(); !strings.Contains(h, want) || (restarted && strings.Contains(h, "restart agents")) {
			t.Errorf("agents restarted %v (judged on %q): the header lacks %q (or asks for a restart):\n%s", restarted, c.judged, want, h)
		}
	}
}

// TestJournalViewFollowsOtherWrites: an open journal view kept saying
// "nothing applied yet" after another hand's apply, while the header
// named it (the tour): a new write reloads it.
func TestJournalViewFollowsOtherWrites(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	a := editing(t, testDesk(path, snap), snap, alice)
	typeKeys(a, "J")
	if v := screen(a); !strings.Contains(v, "nothing applied yet") {
		t.Fatalf("a fresh journal view:\n%s", v)
	}
	rootMoves(t, path, snap, fake.Agent0, nil)
	a.Update(kit.TickMsg{})
	if v := screen(a); strings.Contains(v, "nothing applied yet") || !strings.Contains(v, "root") {
		t.Errorf("the journal view after root's apply:\n%s", v)
	}
}

// TestJournalCommandFollowsOtherWrites: an open :journal (a viewer's, who
// has no editor) reads the journal anew when another hand writes
// agent.toml, as the editor's journal view does; one closed stays closed.
func TestJournalCommandFollowsOtherWrites(t *testing.T) {
	path := fixtureConfig(t)
	snap := freeNode()
	a := testApp(t, 160, 40, snap, Options{ReadOnly: true, Desk: testDesk(path, snap)})
	command(a, "journal")
	if v := screen(a); !strings.Contains(v, "nothing applied yet") {
		t.Fatalf("a fresh :journal:\n%s", v)
	}
	rootMoves(t, path, snap, fake.Agent0, nil)
	a.Update(kit.TickMsg{})
	if v := screen(a); strings.Contains(v, "nothing applied yet") || !strings.Contains(v, "root") {
		t.Errorf(":journal after root's apply:\n%s", v)
	}
	press(a, esc)
	a.jourWrite = partition.Hold{}
	a.Update(kit.TickMsg{})
	if detailOf(a) != nil {
		t.Errorf("a closed :journal came back on a write")
	}
}

// rootMoves applies, as root from the command line (another hand than the
// console's), agent.toml at path with GPU4 moved to owner; now stamps the
// write (nil: the clock).
func rootMoves(t *testing.T, path string, snap *model.Snapshot, owner model.AgentID, now func() time.Time) {
	t.Helper()
	cur, err := agentconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	draft, errs := partition.Draft(cur, partition.InventoryOf(snap), partition.Request{Moves: []partition.Move{{Device: "cuda:" + string(fake.GPU(4)), Agent: owner}}})
	root := agentconfig.Actor{Name: "root", Origin: "cli", Role: agentconfig.RoleOperator}
	if _, err := partition.Apply(partition.Build(cur, draft, snap, errs...), partition.ApplyOptions{Actor: root, Now: now}); err != nil {
		t.Fatal(err)
	}
}
