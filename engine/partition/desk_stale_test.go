package partition

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// TestSessionStaleFromSnapshotHash: Stale judges a draft from the hash the
// engine publishes, reading nothing: the hash of the base or the one the
// snapshot carried when the base was set says nothing; any other hash (an
// edit on disk the engine followed, or a file it cannot use) makes the
// draft stale; so does a write through the desk, at once.
func TestSessionStaleFromSnapshotHash(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	var mu sync.Mutex
	snap := snapshot(fixtureDevices())
	snap.ConfigHash = "engine-has-not-read-it-yet"
	latest := func() *model.Snapshot { mu.Lock(); defer mu.Unlock(); return snap }
	d := NewDesk(DeskOptions{Config: c.Path, Snapshot: latest})
	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	base := alice.Base().Hash
	for _, tc := range []struct {
		hash, want string
	}{
		{"", ""},
		{"engine-has-not-read-it-yet", ""},
		{base, ""},
		{"0123abcd", "changed on disk"},
		{model.ConfigUnusable, "cannot be used"},
	} {
		err := alice.Stale(tc.hash)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Stale(%q) = %v, want nil", tc.hash, err)
		case tc.want != "" && (!errors.Is(err, ErrStale) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Stale(%q) = %v, want stale %q", tc.hash, err, tc.want)
		}
	}

	// bob writes through the same desk: alice is stale whatever the
	// snapshot says; bob's own session is not, even before the engine has
	// read his file (the snapshot still carries the old hash).
	mu.Lock()
	snap = snapshot(fixtureDevices())
	snap.ConfigHash = base
	mu.Unlock()
	alice.Close()
	bob, err := d.Open(agentconfig.Actor{Name: "bob", Origin: "cli", Role: agentconfig.RoleOperator}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.Apply(bob.Plan(Request{Mem: []MemSet{{Agent: agentA, Bytes: model.NewDec(64<<30, 0)}}}), false); err != nil {
		t.Fatal(err)
	}
	if err := bob.Stale(base); err != nil {
		t.Fatalf("the writer's own session, engine not caught up: %v", err)
	}
	raw, _ := os.ReadFile(c.Path)
	sum := sha256.Sum256(raw)
	if err := bob.Stale(hex.EncodeToString(sum[:])); err != nil {
		t.Fatalf("the writer's own session, engine caught up: %v", err)
	}
	// Once the engine has caught up, the old hash is news: another process
	// restored the file of before (a rollback).
	if err := bob.Stale(base); !errors.Is(err, ErrStale) {
		t.Fatalf("the old file back after the engine caught up: %v, want stale", err)
	}
	if err := alice.Stale(base); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed session: %v", err)
	}
}

// TestSessionStaleAfterAnotherWrite: a session of the desk goes stale at
// once when another session of the desk writes (no snapshot needed).
func TestSessionStaleAfterAnotherWrite(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := d.Open(agentconfig.Actor{Name: "bob", Origin: "cli", Role: agentconfig.RoleOperator}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if err := alice.Stale(""); !errors.Is(err, ErrTakenOver) {
		t.Fatalf("taken-over session: %v", err)
	}
	if err := alice.Lost(); !errors.Is(err, ErrTakenOver) {
		t.Fatalf("Lost of a taken-over session: %v", err)
	}
	if err := bob.Lost(); err != nil {
		t.Fatalf("Lost of the holder: %v", err)
	}
	if _, err := bob.Apply(bob.Plan(Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}), false); err != nil {
		t.Fatal(err)
	}
	if err := bob.Stale(""); err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// TestSessionLostToAnotherProcess: a take-over by another process (its
// own desk on the same file) is seen by Lost through the draft record.
func TestSessionLostToAnotherProcess(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	here := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	there := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	alice, err := here.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	if err := alice.Lost(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	bob, err := there.Open(agentconfig.Actor{Name: "bob", Origin: "cli", Role: agentconfig.RoleOperator}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	deadline := time.Now().Add(3 * recordTTL)
	for alice.Lost() == nil && time.Now().Before(deadline) {
		time.Sleep(recordTTL / 5)
	}
	if err := alice.Lost(); !errors.Is(err, ErrTakenOver) || !strings.Contains(err.Error(), "bob") {
		t.Fatalf("Lost after another process took over = %v", err)
	}
}
