package console

import (
	"os"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/editor"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestEditorApplyDialogClosesWhenStale: agent.toml changes on disk while
// the apply dialog is open (bob's CLI apply, a hand edit). The dialog
// closed only when Apply was pressed and refused; it must close as soon
// as the console sees the change, saying whose write made the draft stale
// and that nothing was written, the draft kept and the file left as the
// other hand wrote it.
func TestEditorApplyDialogClosesWhenStale(t *testing.T) {
	bobApplies := func(t *testing.T, path string) {
		snap := freeNode()
		cur, err := agentconfig.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		draft, errs := partition.Draft(cur, partition.InventoryOf(snap), partition.Request{Mem: []partition.MemSet{{Agent: fake.Agent1, Bytes: model.NewDec(64<<30, 0)}}})
		if _, err := partition.Apply(partition.Build(cur, draft, snap, errs...), partition.ApplyOptions{Actor: bob}); err != nil {
			t.Fatal(err)
		}
	}
	handEdit := func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte(strings.Replace(mustRead(t, path), `mem = "120G"`, `mem = "100G"`, 1)), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		// earlier is a write reviewed before the dialog opens: not the
		// one that made the plan under the dialog stale.
		earlier, write func(t *testing.T, path string)
		who, notWho    string
	}{
		{"another apply", nil, bobApplies, "by bob; J lists it", ""},
		// Nothing in the journal names the hand: the reason alone.
		{"a hand edit", nil, handEdit, "changed on disk", " by "},
		{"a hand edit after bob's apply", bobApplies, handEdit, "outside fgtop", "bob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := fixtureConfig(t)
			snap := freeNode()
			a := editing(t, testDesk(path, snap), snap, alice)
			if tc.earlier != nil {
				tc.earlier(t, path)
				engineReads(t, a, snap, path)
				a.Update(kit.TickMsg{})
				typeKeys(a, "p")
				if a.ed().Stale != "" {
					t.Fatalf("the earlier write was not reviewed: %q", a.ed().Stale)
				}
				press(a, esc)
			}
			typeKeys(a, "jjj")
			press(a, agentNum(1))
			req := a.ed().Req
			typeKeys(a, "A")
			if d := a.dlg(); d == nil || d.Kind != editor.DlgApply {
				t.Fatalf("A opened no apply dialog:\n%s", screen(a))
			}

			tc.write(t, path)
			written := mustRead(t, path)
			engineReads(t, a, snap, path)
			// The engine's snapshot shows the change before the desk's
			// poll names the hand: the dialog closes at once, naming no
			// earlier write.
			if d := a.dlg(); d != nil || !strings.Contains(a.Flash.Text, "apply dialog closed") {
				t.Fatalf("the engine's snapshot of the new file leaves the dialog (%v); flash %q", d != nil, a.Flash.Text)
			}
			if tc.notWho != "" && strings.Contains(a.Flash.Text, tc.notWho) {
				t.Errorf("before the poll, the notice names %q: %q", tc.notWho, a.Flash.Text)
			}
			a.Update(kit.TickMsg{})

			if a.ed().Stale == "" {
				t.Fatalf("not stale after the write:\n%s", screen(a))
			}
			if d := a.dlg(); d != nil {
				t.Fatalf("the apply dialog (%q) stays open over a stale draft:\n%s", d.Title, screen(a))
			}
			f := a.Flash.Text
			if v := screen(a); !strings.Contains(v, "apply dialog closed, nothing written: ") || !strings.Contains(v, "STALE: agent.toml was changed on disk") {
				t.Errorf("the screen does not say the dialog closed on a stale draft:\n%s", v)
			}
			for _, want := range []string{"apply dialog closed, nothing written", tc.who, "draft kept, p reviews"} {
				if !strings.Contains(f, want) {
					t.Errorf("the notice lacks %q: %q", want, f)
				}
			}
			if tc.notWho != "" && strings.Contains(f, tc.notWho) {
				t.Errorf("the notice names %q, not the write under the dialog: %q", tc.notWho, f)
			}
			if a.Flash.Lvl != kit.LvlCrit {
				t.Errorf("the notice is level %v, not critical: %q", a.Flash.Lvl, f)
			}
			// An Enter by reflex right after lands on no dialog.
			press(a, enter)
			a.Update(kit.TickMsg{})
			if got := mustRead(t, path); got != written {
				t.Errorf("agent.toml changed after the dialog closed:\n%s", got)
			}
			if a.ed() == nil || len(a.ed().Req.Moves) != len(req.Moves) || len(req.Moves) == 0 {
				t.Errorf("the draft was not kept: %+v, had %+v", a.ed().Req, req)
			}
		})
	}
}
