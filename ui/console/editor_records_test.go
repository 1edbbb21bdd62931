package console

import (
	"testing"

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
		a, msgs := editorOpen(t, snap, Options{Actor: alice, Desk: testDesk(path, snap), History: dir, Records: records})
		setAmount(a, msgs, "j", "2.2")
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
