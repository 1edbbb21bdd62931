package console

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/replay"
)

// TestEditorReplaySharesTheProcessCache: the editor reads the record
// through the cache its console is given (one per process, made by
// cmd/fgtop), so two consoles of one serve hold one read of the week;
// a console given none reads through its own and leaves it alone.
func TestEditorReplaySharesTheProcessCache(t *testing.T) {
	path, dir, snap := recordedNode(t)
	shared := replay.NewRecordCache(replay.RecordsMax)
	open := func(records *replay.RecordCache) {
		a := testApp(t, 140, 40, snap, Options{Actor: alice, Desk: testDesk(path, snap), History: dir, Records: records})
		a.SyncCmds = false
		msgs := make(chan tea.Msg, 64)
		_, cmd := a.Update(keyRune('e'))
		runCmds(cmd, msgs)
		deliverUntil(t, a, msgs, "the editor", func() bool { return a.ed() != nil })
		step(a, msgs, keyRune('j'))
		step(a, msgs, enter)
		step(a, msgs, clearIn)
		for _, r := range "2.2" {
			step(a, msgs, keyRune(r))
		}
		step(a, msgs, enter)
		lineUntil(t, a, msgs, "1 session of i-node-a would not have started (cuda.shares peak 1.8 > 1.5)")
		a.Close()
	}
	open(nil)
	if n := shared.Len(); n != 0 {
		t.Fatalf("a console given no cache read into the shared one (%d records)", n)
	}
	open(shared)
	open(shared)
	if n := shared.Len(); n != 1 {
		t.Fatalf("the process's cache holds %d records after two consoles replayed one directory, want 1", n)
	}
}
