package partition

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// TestDeskRecordWriteNeverStallsConsoles: another operator's Open (here a
// take-over) or Close holds the desk's state lock across the draft record's
// locked, fsynced write. What a console reads on its UI loop on every frame
// or snapshot (Base, Stale, LastWrite) must not wait for it. The record's
// flock is held by the test, so bob's take-over stops inside that write.
func TestDeskRecordWriteNeverStallsConsoles(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	d := newTestDesk(t, c.Path, snapshot(fixtureDevices()))
	alice, err := d.Open(operator, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(DraftRecordPath(d.Path()), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
	}
	defer unlock()

	bob := agentconfig.Actor{Name: "bob", Origin: "ssh:192.0.2.9:4022", Role: agentconfig.RoleOperator}
	opened := make(chan error, 1)
	go func() {
		_, err := d.Open(bob, true)
		opened <- err
	}()
	// Bob's Open has taken the state lock once it waits on the record.
	deadline := time.Now().Add(2 * time.Second)
	for d.mu.TryLock() {
		d.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("bob's Open never reached the draft record")
		}
		time.Sleep(time.Millisecond)
	}
	read := make(chan struct{})
	go func() {
		alice.Base()
		_ = alice.Stale("")
		d.LastWrite()
		close(read)
	}()
	select {
	case <-read:
	case <-time.After(time.Second):
		unlock()
		t.Fatal("alice's console waited for bob's draft record write")
	}
	unlock()
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
	if err := alice.Stale(""); !errors.Is(err, ErrTakenOver) {
		t.Errorf("alice after bob's take-over: Stale = %v, want ErrTakenOver", err)
	}
}
