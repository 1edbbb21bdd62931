package editor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/engine/replay"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/kit"
)

// refusedEditor is an editor showing the refused list of a result with n
// refusals, the i-th of kernel k<i> at base+i seconds, worded "why <i>".
func refusedEditor(t testing.TB, n, w, h int) *Editor {
	t.Helper()
	st, err := kit.NewStyles(themes.MustBuiltin(themes.Mono), false)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	res := &replay.Result{Sessions: n}
	for i := range n {
		res.Refused = append(res.Refused, replay.Refusal{At: base.Add(time.Duration(i) * time.Second), Kernel: model.KernelID(fmt.Sprintf("k%06d", i)),
			Agent: "i-node-a", Requested: model.ResourceSlot{model.SlotCUDAShares: model.MustDec("0.5")}, Reason: fmt.Sprintf("why %06d", i)})
	}
	e := &Editor{Common: &kit.Common{St: st, Width: w, Height: h}}
	e.rp.dir, e.rp.res, e.rp.gen, e.rp.resGen = "/nowhere", res, 1, 1
	e.Showing = edRefused
	return e
}

func plain(rows []string) string { return ansi.Strip(strings.Join(rows, "\n")) }

// TestRefusedListScrollsByRefusal: the list draws the refusals from its
// offset on, each with its reason under it, and says which of how many it
// shows; the wheel and j/k move one refusal, a page what the frame
// showed, G to the last screen, whose last row is the last refusal's
// reason; the header stays.
func TestRefusedListScrollsByRefusal(t *testing.T) {
	const n, w, h = 1000, 100, 12
	e := refusedEditor(t, n, w, h)
	v := plain(e.viewRefused(w, h))
	// 12 rows: the title, the header, then 5 refusals of two rows each.
	for _, want := range []string{"Refused under the draft", "1-5/1000", "TIME", "k000000", "why 000000", "k000004", "why 000004"} {
		if !strings.Contains(v, want) {
			t.Errorf("first screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "k000005") {
		t.Errorf("first screen shows a sixth refusal in 10 rows:\n%s", v)
	}
	e.Scroll(&e.rp.refOff, kit.ActDown)
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "2-6/1000") || strings.Contains(v, "k000000") || !strings.Contains(v, "why 000005") {
		t.Errorf("one down:\n%s", v)
	}
	e.rp.refOff += e.rp.refPage // what ActPageDown does
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "7-11/1000") || !strings.HasPrefix(strings.Split(v, "\n")[2], " 2026") {
		t.Errorf("a page down:\n%s", v)
	}
	e.Scroll(&e.rp.refOff, kit.ActBottom)
	v = plain(e.viewRefused(w, h))
	rows := strings.Split(v, "\n")
	if !strings.Contains(v, "996-1000/1000") || !strings.Contains(rows[len(rows)-1], "why 000999") || len(rows) != h {
		t.Errorf("G: the last screen (%d rows):\n%s", len(rows), v)
	}
	if !strings.Contains(rows[1], "TIME") {
		t.Errorf("G: the header scrolled away:\n%s", v)
	}
	e.Scroll(&e.rp.refOff, kit.ActTop)
	if v := plain(e.viewRefused(w, h)); !strings.Contains(v, "1-5/1000") {
		t.Errorf("g:\n%s", v)
	}
}

// TestRefusedListOneScreen: a list that fits shows no position, and a
// long reason wraps under its refusal.
func TestRefusedListOneScreen(t *testing.T) {
	e := refusedEditor(t, 2, 40, 20)
	e.rp.res.Refused[1].Reason = strings.Repeat("word ", 20)
	e.rp.res.Refused[1].CouldRunOn = []model.AgentID{"i-node-b"}
	v := plain(e.viewRefused(40, 20))
	if strings.Contains(v, "/2") || !strings.Contains(v, "why 000000") || !strings.Contains(v, "i-node-b") {
		t.Errorf("two refusals on one screen:\n%s", v)
	}
	if rows := strings.Split(v, "\n"); len(rows) < 2+2+4 {
		t.Errorf("the long reason did not wrap (%d rows):\n%s", len(rows), v)
	}
}

// BenchmarkRefusedList is one frame of the refused list of 200,000
// refusals (a busy week's under a small draft): BENCHMARKS.md.
func BenchmarkRefusedList(b *testing.B) {
	e := refusedEditor(b, 200000, 160, 48)
	e.rp.refOff = 100000
	b.ReportAllocs()
	for b.Loop() {
		e.viewRefused(160, 48)
	}
}
