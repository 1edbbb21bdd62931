package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/internal/fake"
)

// hostileNode is the fixture node with hostile.Payload planted in every
// string, as a fleet peer sends it: through the snapshot document and
// report.ParseLine, where outside text enters.
func hostileNode(t testing.TB, o fake.Options) *model.Snapshot {
	t.Helper()
	line, err := report.Marshal(report.FromSnapshot(hostile.Snapshot(fake.Node(o))), false)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := report.ParseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	s, err := doc.Model()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hostileKeys are the keys a fuzz input picks from: every view, pane,
// detail, prompt and the copy action, never quit.
var hostileKeys = []tea.KeyPressMsg{
	keyRune('j'), keyRune('k'), keyRune('g'), keyRune('G'), keyCode(tea.KeyTab), {Code: tea.KeyTab, Mod: tea.ModShift},
	keyCode(tea.KeyEnter), keyCode(tea.KeyEscape), keyRune('/'), keyRune(':'), keyRune('?'), keyRune('s'), keyRune('S'),
	keyRune('f'), keyRune('a'), keyRune('y'), keyCode(tea.KeyPgDown), keyRune('x'), keyRune('0'),
}

// checkClean fails t when the frame or the title holds a byte fgtop did
// not emit itself.
func checkClean(t testing.TB, what string, v tea.View) {
	t.Helper()
	if f := hostile.Foreign(v.Content); len(f) > 0 {
		t.Fatalf("%s: raw bytes on screen: %v", what, f)
	}
	if f := hostile.Foreign(v.WindowTitle); len(f) > 0 || strings.Contains(v.WindowTitle, "\n") {
		t.Fatalf("%s: raw bytes in the title %q: %v", what, v.WindowTitle, f)
	}
}

// checkCmd runs what a key returned (the copy action's clipboard write
// among it) and fails t when a message carries raw control text.
func checkCmd(t testing.TB, what string, cmd tea.Cmd, depth int) {
	t.Helper()
	if cmd == nil || depth > 2 {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(50 * time.Millisecond):
		return // a tick or a wait: not text
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			checkCmd(t, what, c, depth+1)
		}
		return
	}
	if s := fmt.Sprint(msg); strings.Contains(fmt.Sprintf("%T", msg), "lipboard") {
		if f := hostile.Foreign(s); len(f) > 0 || strings.ContainsAny(s, "\n\r") {
			t.Fatalf("%s: the clipboard gets %q", what, s)
		}
	}
}

// runConsole drives a console on the hostile node with keys, checking
// every frame.
func runConsole(t testing.TB, w, h int, ro bool, keys []byte) {
	t.Helper()
	a := testApp(t, w, h, hostileNode(t, fake.Options{}), Options{ReadOnly: ro, ASCII: true, Theme: themes.MustBuiltin(themes.Mono)})
	checkClean(t, "first frame", a.View())
	for i, k := range keys {
		key := hostileKeys[int(k)%len(hostileKeys)]
		_, cmd := a.Update(key)
		what := fmt.Sprintf("%dx%d after key %d (%s)", w, h, i, key)
		checkClean(t, what, a.View())
		checkCmd(t, what, cmd, 0)
	}
}

// TestHostileScreens renders every screen of the console on a node whose
// every field holds escape sequences: each pane (Tab), each row's detail
// (Enter), help, the filter and command prompts, the copy action.
func TestHostileScreens(t *testing.T) {
	var tour []byte
	idx := func(k tea.KeyPressMsg) byte {
		for i, h := range hostileKeys {
			if h.String() == k.String() {
				return byte(i)
			}
		}
		t.Fatalf("key %s", k)
		return 0
	}
	for range 5 { // each pane: every row's detail, copy, help
		for range 6 {
			tour = append(tour, idx(keyCode(tea.KeyEnter)), idx(keyCode(tea.KeyEscape)), idx(keyRune('y')), idx(keyRune('j')))
		}
		tour = append(tour, idx(keyRune('?')), idx(keyRune('G')), idx(keyCode(tea.KeyEscape)),
			idx(keyRune('/')), idx(keyRune('x')), idx(keyCode(tea.KeyEscape)), idx(keyRune(':')), idx(keyRune('0')),
			idx(keyCode(tea.KeyEnter)), idx(keyCode(tea.KeyEscape)), idx(keyRune('a')), idx(keyRune('f')), idx(keyCode(tea.KeyTab)))
	}
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		runConsole(t, size[0], size[1], false, tour)
		runConsole(t, size[0], size[1], true, tour)
	}
	// The screens did show the payload, escaped: the test looks at it.
	a := testApp(t, 200, 60, hostileNode(t, fake.Options{}), Options{ASCII: true, Theme: themes.MustBuiltin(themes.Mono)})
	if !strings.Contains(a.View().Content, `\x1b]52;c;`) {
		t.Fatalf("the payload is not on screen, escaped:\n%s", a.View().Content)
	}
}

// FuzzHostileScreens drives the console on the hostile node with any key
// sequence: no frame holds a raw escape byte.
func FuzzHostileScreens(f *testing.F) {
	f.Add([]byte{4, 6, 15, 7, 4, 6, 16, 6})
	f.Add([]byte{10, 8, 18, 6, 9, 17, 6, 13, 14})
	f.Fuzz(func(t *testing.T, keys []byte) {
		if len(keys) > 64 {
			keys = keys[:64]
		}
		runConsole(t, 100, 30, false, keys)
	})
}

// TestCopyRefusesNonUUIDKernel: y on a kernel whose id is not a UUID (a
// peer's invention, escaped where it entered) copies nothing and says why.
func TestCopyRefusesNonUUIDKernel(t *testing.T) {
	a := testApp(t, 120, 40, hostileNode(t, fake.Options{}), Options{ReadOnly: true})
	if a.Kernels.follow {
		typeKeys(a, "f")
	}
	for range numPanes {
		if _, ok := a.panes[a.focus].(*kernelsPane); ok {
			break
		}
		a.Update(keyCode(tea.KeyTab))
	}
	if a.selectedID() == "" {
		t.Fatal("no kernel selected: the test proves nothing")
	}
	_, cmd := a.Update(keyRune('y'))
	if cmd != nil || !strings.Contains(a.Flash.Text, "not copied") || !strings.Contains(a.Flash.Text, "not a UUID") {
		t.Fatalf("y on kernel %q: cmd %v, flash %q", a.selectedID(), cmd != nil, a.Flash.Text)
	}
	checkClean(t, "after y", a.View())
}
