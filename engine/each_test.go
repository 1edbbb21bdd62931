package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// TestFollowSnapshots runs FollowSnapshots on a real scratch root: the
// first snapshot it emits is the whole initial scan, a kernel written
// later comes in a later one with a larger sequence number, a tick calls
// beat, cancelling ends it with nil, and emit's error ends it with that
// error.
func TestFollowSnapshots(t *testing.T) {
	root := t.TempDir()
	files := enginetest.NewFiles(t)
	share := []enginetest.Share{{Dev: enginetest.MockDevices[0], Amount: model.MustDec("0.5")}}
	for i := range 3 {
		enginetest.MustWriteKernel(t, root, enginetest.KernelID(i), files.Resource(root, enginetest.KernelID(i), share))
	}
	opts := func() engine.Options {
		return engine.Options{Roots: []scratch.Root{{Path: root, Agent: "a"}}, Inventory: enginetest.MockSource(t), Node: "n",
			Watch: scratch.Options{Debounce: 5 * time.Millisecond, RootPoll: 50 * time.Millisecond, FallbackRescan: 200 * time.Millisecond}}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps := make(chan *model.Snapshot, 100)
	beats := make(chan time.Time, 1)
	tick := make(chan time.Time)
	done := make(chan error, 1)
	go func() {
		done <- engine.FollowSnapshots(ctx, opts(), func(s *model.Snapshot) error { snaps <- s; return nil }, tick,
			func(now time.Time) error { beats <- now; return nil })
	}()
	next := func(what string) *model.Snapshot {
		t.Helper()
		select {
		case s := <-snaps:
			return s
		case err := <-done:
			t.Fatalf("%s: FollowSnapshots returned %v", what, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: nothing emitted after 20s", what)
		}
		return nil
	}
	first := next("the initial scan")
	if n := len(first.Kernels()); n != 3 {
		t.Fatalf("the first snapshot has %d kernels, want the initial scan's 3", n)
	}
	at := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	tick <- at
	if got := <-beats; !got.Equal(at) {
		t.Errorf("beat got %v, want the tick's %v", got, at)
	}
	enginetest.MustWriteKernel(t, root, enginetest.KernelID(3), files.Resource(root, enginetest.KernelID(3), share))
	seq := first.Seq
	for {
		s := next("the kernel written later")
		if s.Seq <= seq {
			t.Fatalf("snapshot %d emitted after %d", s.Seq, seq)
		}
		seq = s.Seq
		if len(s.Kernels()) == 4 {
			break
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after cancel: %v, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("FollowSnapshots did not return 20s after cancel")
	}

	stop := errors.New("reader gone")
	err := engine.FollowSnapshots(context.Background(), opts(), func(*model.Snapshot) error { return stop }, nil, nil)
	if !errors.Is(err, stop) {
		t.Errorf("emit's error: FollowSnapshots returned %v, want %v", err, stop)
	}
}
