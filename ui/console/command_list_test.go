package console

import (
	"strings"
	"testing"
)

// TestHelpListsEveryCommand: every ':' command the console runs is in the
// help's Commands section, and none of them is an unknown command (an
// operator's tour found :filter, :dev, :follow and :help working but not
// listed by the key row that named the commands by hand).
func TestHelpListsEveryCommand(t *testing.T) {
	a := testApp(t, 160, 200, nil, Options{})
	var help string
	for _, l := range helpLines(a, 160) {
		help += stripANSI(l) + "\n"
	}
	for _, c := range commands() {
		for _, n := range c.names[:1] {
			if !strings.Contains(help, "   :"+n) {
				t.Errorf("help's Commands section lacks :%s:\n%s", n, help)
			}
		}
		a.Flash.Text = ""
		a.runCommand(c.names[0])
		if strings.Contains(a.Flash.Text, "unknown command") {
			t.Errorf(":%s is listed but unknown: %s", c.names[0], a.Flash.Text)
		}
	}
	a.runCommand("nosuch")
	if !strings.Contains(a.Flash.Text, "unknown command :nosuch") || !strings.Contains(a.Flash.Text, ":dev GPU1") {
		t.Errorf("an unknown command's hint: %q", a.Flash.Text)
	}
}
