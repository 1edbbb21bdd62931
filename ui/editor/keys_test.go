package editor

import (
	"testing"

	"github.com/fgtop/fgtop/ui/kit"
)

// TestBindingsAreTheEditors: the editor's bindings change the node (a
// viewer's map leaves them out), work only in the editor's scopes, are
// its own actions, and no key does two things in one scope.
func TestBindingsAreTheEditors(t *testing.T) {
	seen := map[kit.Scope]map[string]kit.Action{}
	for _, b := range Bindings() {
		if !b.Mutating || b.Group != GrpEdit {
			t.Errorf("%v: mutating %v, group %q", b.Key.Keys(), b.Mutating, b.Group)
		}
		if b.Scope == 0 || b.Scope&^Scopes != 0 || b.Short&^b.Scope != 0 {
			t.Errorf("%v: scope %b, short %b, the editor's %b", b.Key.Keys(), b.Scope, b.Short, Scopes)
		}
		if b.Act < ActEdPrevAgent || b.Act > ActEdRollback {
			t.Errorf("%v: action %d is not the editor's", b.Key.Keys(), b.Act)
		}
		for sc := ScEditor; sc <= ScSlotGrid; sc <<= 1 {
			if b.Scope&sc == 0 {
				continue
			}
			if seen[sc] == nil {
				seen[sc] = map[string]kit.Action{}
			}
			for _, k := range b.Key.Keys() {
				if a, ok := seen[sc][k]; ok && a != b.Act {
					t.Errorf("key %q does two things in scope %b", k, sc)
				}
				seen[sc][k] = b.Act
			}
		}
	}
	if len(seen[ScSlotGrid]) == 0 || len(seen[ScEditor]) == 0 {
		t.Fatal("the grids have no keys")
	}
	// The slot-based grid has no device-move keys: devices are not
	// exclusive there.
	for _, k := range []string{"left", "right", "1"} {
		if _, ok := seen[ScSlotGrid][k]; ok {
			t.Errorf("the slot grid binds %q", k)
		}
	}
}
