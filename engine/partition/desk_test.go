package partition

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func newTestDesk(t *testing.T, path string, snap *model.Snapshot) *Desk {
	t.Helper()
	clock := time.Date(2026, 11, 21, 14, 2, 3, 0, time.Local)
	var mu sync.Mutex
	return NewDesk(DeskOptions{Config: path, Snapshot: func() *model.Snapshot { return snap },
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(time.Second); return clock }})
}

func TestDeskRefusesViewers(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	for _, role := range []agentconfig.Role{agentconfig.RoleViewer, ""} {
		if _, err := d.Open(agentconfig.Actor{Name: "v", Role: role}, true); !errors.Is(err, agentconfig.ErrNotAllowed) {
			t.Errorf("role %q: Open = %v, want ErrNotAllowed", role, err)
		}
	}
	if _, held := d.Holder(); held {
		t.Error("a refused viewer holds the draft")
	}
}

func TestDeskOneEditorAtATime(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	bob := agentconfig.Actor{Name: "bob", Origin: "ssh:192.0.2.9:4022", Role: agentconfig.RoleOperator}

	v0 := d.Version()
	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	h, held := d.Holder()
	if !held || h.Actor.Name != "alice" || h.String() != "alice (cli) since 14:02:04" || d.Version() == v0 {
		t.Fatalf("holder %v %v, version %d", h, held, d.Version())
	}
	if _, err := d.Open(bob, false); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "the draft is held by alice (cli) since 14:02:04") {
		t.Fatalf("second Open = %v, want ErrBusy naming alice", err)
	}

	// Bob takes over: alice's session may no longer apply, and her Close
	// does not release bob's hold.
	p := alice.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}})
	bs, err := d.Open(bob, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Apply(p, false); !errors.Is(err, ErrTakenOver) || !strings.Contains(err.Error(), "bob (ssh:192.0.2.9:4022)") {
		t.Errorf("apply after take-over = %v", err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(c.Raw) {
		t.Error("a refused apply changed the file")
	}
	alice.Close()
	if h, _ := d.Holder(); h.Actor.Name != "bob" {
		t.Errorf("holder after alice's close: %v", h)
	}
	bs.Close()
	bs.Close()
	if _, held := d.Holder(); held {
		t.Error("draft still held after the holder closed")
	}
	if _, err := bs.Apply(p, false); !errors.Is(err, ErrClosed) {
		t.Errorf("apply after close = %v", err)
	}
}

// An apply from outside the desk (the CLI's `fgtop apply`, which takes no
// draft) makes the console's draft stale until reviewed.
func TestDeskStaleAfterAnotherApply(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	d1 := newTestDesk(t, c.Path, snap)
	bob := agentconfig.Actor{Name: "bob", Origin: "cli", Role: agentconfig.RoleOperator}

	alice, err := d1.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}
	old := alice.Plan(req)
	if !old.Valid() || !old.Changed() {
		t.Fatalf("plan: %+v", old.Errors)
	}
	if err := alice.Check(); err != nil {
		t.Fatalf("fresh session: %v", err)
	}

	if _, err := Apply(plan(t, c, snap, Request{Mem: []MemSet{{Agent: agentA, Bytes: model.NewDec(64<<30, 0)}}}), ApplyOptions{Actor: bob}); err != nil {
		t.Fatal(err)
	}

	if err := alice.Check(); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("Check after bob's apply = %v, want stale", err)
	}
	afterBob, _ := os.ReadFile(c.Path)
	if _, err := alice.Apply(old, false); !errors.Is(err, ErrStale) {
		t.Fatalf("stale apply = %v", err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(afterBob) {
		t.Fatal("a stale apply changed the file")
	}

	// Reviewing rebases the draft: the same request, planned again, keeps
	// bob's change and adds alice's.
	if err := alice.Review(); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Apply(old, false); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "earlier version") {
		t.Fatalf("apply of a plan made before the review = %v", err)
	}
	res, err := alice.Apply(alice.Plan(req), false)
	if err != nil || !res.Verified {
		t.Fatalf("apply after review: %v %+v", err, res)
	}
	final, err := agentconfig.Load(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	if got := final.Agent(agentA).Alloc.Mem; got.Cmp(model.NewDec(64<<30, 0)) != 0 {
		t.Errorf("bob's mem change lost: %s", got)
	}
	if ids := final.Agent(agentB).Alloc.Devices["cuda"]; !containsID(ids, gpu3) {
		t.Errorf("alice's move missing: %v", ids)
	}
	if w, ok := d1.LastWrite(); !ok || w.Actor.Name != "alice" {
		t.Errorf("last write %v %v", w, ok)
	}

	// The session stays current after its own write, and a rollback goes
	// through it too (journaled for alice).
	if err := alice.Check(); err != nil {
		t.Errorf("after own apply: %v", err)
	}
	pv, err := alice.PreviewRollback()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.UndoApply(pv.Undoes); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(afterBob) {
		t.Error("rollback did not restore the file as bob left it")
	}
	recs, _, _ := agentconfig.ReadJournal(agentconfig.JournalPath(c.Path))
	if n := len(recs); n != 3 || recs[2].Actor != "alice" || recs[2].Action != "rollback" || recs[0].Actor != "bob" {
		t.Errorf("journal: %d records, last %+v", n, recs[n-1])
	}
}

func containsID(ids []model.DeviceID, id string) bool {
	for _, x := range ids {
		if string(x) == id {
			return true
		}
	}
	return false
}

func TestDeskJournal(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	if recs, bad, err := d.Journal(5); err != nil || bad != 0 || len(recs) != 0 {
		t.Fatalf("empty journal: %v %d %v", recs, bad, err)
	}
	if d.JournalPath() != agentconfig.JournalPath(c.Path) {
		t.Errorf("journal path %s", d.JournalPath())
	}
	s, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, gib := range []int64{64, 96} {
		if _, err := s.Apply(s.Plan(Request{Mem: []MemSet{{Agent: agentA, Bytes: model.NewDec(gib<<30, 0)}}}), false); err != nil {
			t.Fatal(err)
		}
	}
	all, _, err := d.Journal(0)
	if err != nil || len(all) != 2 {
		t.Fatalf("journal: %d records, %v", len(all), err)
	}
	// Newest first: the second apply starts from the first one's result.
	if all[0].OldHash != all[1].NewHash || all[0].Actor != "alice" {
		t.Errorf("order: %+v", all)
	}
	last, _, _ := d.Journal(1)
	if len(last) != 1 || last[0].NewHash != all[0].NewHash {
		t.Errorf("Journal(1) = %+v", last)
	}

	custom := NewDesk(DeskOptions{Config: c.Path, Journal: c.Path + ".custom"})
	if custom.JournalPath() != c.Path+".custom" {
		t.Errorf("custom journal path %s", custom.JournalPath())
	}
}

func TestSessionHolds(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	a, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Holds() {
		t.Fatal("the opener does not hold the draft")
	}
	b, err := d.Open(agentconfig.Actor{Name: "bob", Role: agentconfig.RoleOperator}, true)
	if err != nil {
		t.Fatal(err)
	}
	if a.Holds() || !b.Holds() {
		t.Errorf("after the take-over: alice %v, bob %v", a.Holds(), b.Holds())
	}
	b.Close()
	if b.Holds() {
		t.Error("a closed session holds the draft")
	}
}

// A force confirms the kernels the operator was shown: a kernel that
// starts on a moving device while the dialog is open stops the apply.
func TestDeskApplyRechecksLiveKernels(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	var mu sync.Mutex
	snap := snapshot(fixtureDevices())
	setSnap := func(s *model.Snapshot) { mu.Lock(); snap = s; mu.Unlock() }
	d := NewDesk(DeskOptions{Config: c.Path, Snapshot: func() *model.Snapshot { mu.Lock(); defer mu.Unlock(); return snap }})
	s, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}

	free := s.Plan(req)
	if len(free.Affected()) != 0 {
		t.Fatalf("gpu3 is not free: %v", free.Affected())
	}
	setSnap(snapshot(fixtureDevices(), kernel("late", agentA, gpu3, "0.25")))
	if _, err := s.Apply(free, false); !errors.Is(err, ErrLiveKernels) || !strings.Contains(err.Error(), "since the plan was made") || !strings.Contains(err.Error(), "kernel late") {
		t.Fatalf("apply of a plan that became unsafe = %v", err)
	}

	held := s.Plan(req)
	if len(held.Affected()) != 1 {
		t.Fatalf("affected %v", held.Affected())
	}
	setSnap(snapshot(fixtureDevices(), kernel("late", agentA, gpu3, "0.25"), kernel("later", agentA, gpu3, "0.50")))
	if _, err := s.Apply(held, true); !errors.Is(err, ErrLiveKernels) || !strings.Contains(err.Error(), "kernel later") || strings.Contains(err.Error(), "kernel late ") {
		t.Fatalf("forced apply with an unconfirmed kernel = %v", err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(c.Raw) {
		t.Fatal("a refused apply changed the file")
	}
	// The kernel the operator confirmed is still there, the later one has
	// ended (an amount change of a confirmed kernel is no news either).
	setSnap(snapshot(fixtureDevices(), kernel("late", agentA, gpu3, "0.30")))
	if res, err := s.Apply(held, true); err != nil || !res.Verified {
		t.Fatalf("forced apply of the confirmed kernels: %v", err)
	}
}

// Two desks on one config are two processes (two operators each running
// fgtop on the node, or two servers): the draft record beside the config
// makes one editor at a time hold between them too.
func TestDeskOneEditorAcrossProcesses(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	d1, d2 := newTestDesk(t, c.Path, snap), newTestDesk(t, c.Path, snap)
	bob := agentconfig.Actor{Name: "bob", Origin: "console", Role: agentconfig.RoleOperator}

	alice, err := d1.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Open(bob, false); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "held by alice (cli)") {
		t.Fatalf("Open in the other process = %v, want ErrBusy naming alice", err)
	}
	if h, held := d2.Holder(); !held || h.Actor.Name != "alice" {
		t.Fatalf("the other process sees holder %v %v", h, held)
	}

	bs, err := d2.Open(bob, true)
	if err != nil {
		t.Fatal(err)
	}
	p := alice.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}})
	if _, err := alice.Apply(p, false); !errors.Is(err, ErrTakenOver) || !strings.Contains(err.Error(), "bob (console)") {
		t.Fatalf("apply after a take-over from another process = %v", err)
	}
	if b, _ := os.ReadFile(c.Path); string(b) != string(c.Raw) {
		t.Fatal("a refused apply changed the file")
	}
	d1.forgetExternal() // skip the read cache
	if h, held := d1.Holder(); !held || h.Actor.Name != "bob" {
		t.Fatalf("alice's process sees holder %v %v after the take-over", h, held)
	}
	alice.Close() // must not clear bob's record
	d1.forgetExternal()
	if h, _ := d1.Holder(); h.Actor.Name != "bob" {
		t.Fatalf("holder after alice's close: %v", h)
	}
	bs.Close()
	d1.forgetExternal()
	if _, held := d1.Holder(); held {
		t.Fatal("the draft is still held after bob closed")
	}
}

// A record left by a process that died does not hold the draft.
func TestDeskRecordOfADeadProcessIsVoid(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to get a dead pid from:", err)
	}
	host, _ := os.Hostname()
	dead := fmt.Sprintf(`{"token":"t0","actor":{"name":"ghost","origin":"console","role":"operator"},"since":"2026-11-21T03:00:00Z","pid":%d,"host":%q}`, cmd.Process.Pid, host)
	if err := os.WriteFile(DraftRecordPath(c.Path), []byte(dead), 0o640); err != nil {
		t.Fatal(err)
	}
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	if _, held := d.Holder(); held {
		t.Fatal("a dead process holds the draft")
	}
	s, err := d.Open(operator, false)
	if err != nil {
		t.Fatalf("Open over a dead record = %v", err)
	}
	defer s.Close()
	// A record of a live process elsewhere (another host) is respected.
	other := strings.Replace(dead, fmt.Sprintf("%q}", host), `"other-host"}`, 1)
	s.Close()
	if err := os.WriteFile(DraftRecordPath(c.Path), []byte(other), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := newTestDesk(t, c.Path, snapshot(fixtureDevices())).Open(operator, false); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "ghost") {
		t.Fatalf("Open over another host's record = %v", err)
	}
}

// Every console polls the desk once a second and reads its state while it
// draws; an apply (which fsyncs) must not stall them.
func TestDeskVersionDuringApply(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	inWrite, release := make(chan struct{}), make(chan struct{})
	d := NewDesk(DeskOptions{Config: c.Path, Snapshot: func() *model.Snapshot { return snapshot(fixtureDevices()) },
		Hooks: &agentconfig.Hooks{Fault: func(s agentconfig.Step) error {
			if s == agentconfig.StepTempWritten {
				close(inWrite)
				<-release
			}
			return nil
		}}})
	s, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Apply(s.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}), false)
		done <- err
	}()
	<-inWrite
	before := d.Version()
	got := make(chan uint64, 1)
	go func() { got <- d.Version() }()
	select {
	case <-got:
	case <-time.After(2 * time.Second):
		t.Fatal("Version blocked while an apply was writing")
	}
	// Nor does the rest of what a console reads while it draws: the
	// write holds its own lock, not the desk's state.
	state := make(chan struct{})
	go func() {
		d.Holder()
		d.LastWrite()
		s.Holds()
		s.Base()
		_ = s.Stale("")
		s.Plan(Request{})
		close(state)
	}()
	select {
	case <-state:
	case <-time.After(2 * time.Second):
		close(release)
		t.Fatal("the desk's state blocked while an apply was writing")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d.Version() == before {
		t.Error("the write did not change the version")
	}
}
