package console

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
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

// TestHelpSaysTheRecordsCommandsNeedOne: a console that keeps no history
// lists :at, :live and :span as needing one (they only say so when run),
// as [ and ] are left out of its keys; one with a record lists them plain.
func TestHelpSaysTheRecordsCommandsNeedOne(t *testing.T) {
	for _, hist := range []string{"", t.TempDir()} {
		a := testApp(t, 200, 200, nil, Options{History: hist})
		var help string
		for _, l := range helpLines(a, 200) {
			help += stripANSI(l) + "\n"
		}
		marked := strings.Count(help, "no record here (start fgtop with --history DIR)")
		if want := map[bool]int{true: 3, false: 0}[hist == ""]; marked != want {
			t.Errorf("history %q: %d commands marked, want %d:\n%s", hist, marked, want, help)
		}
	}
}

// TestNoRecordSaidWholeAt80: at 80 columns :at and :span on a console
// without a record say what to do whole in the footer; the long form was
// cut "(or run fgtop …".
func TestNoRecordSaidWholeAt80(t *testing.T) {
	for _, cmd := range []string{"at -1h", "span 1h"} {
		a := testApp(t, 80, 24, nil, Options{})
		a.View()
		a.Update(keyRune(':'))
		typeKeys(a, cmd)
		a.Update(keyCode(tea.KeyEnter))
		lines := strings.Split(screen(a), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, "start fgtop with --history DIR") ||
			strings.Contains(last, "(or run") && !strings.Contains(last, "(or run fgtop record)") {
			t.Errorf(":%s at 80 columns: footer %q", cmd, last)
		}
	}
}

// TestUnknownCommandDidYouMean: a typo of a command (:fitt) names the
// command meant, as fgtop's other unknown names do; a word close to no
// command only lists them.
func TestUnknownCommandDidYouMean(t *testing.T) {
	a := testApp(t, 160, 40, nil, Options{})
	for _, c := range []struct{ line, want string }{
		{"fitt cuda.shares=0.5", "unknown command :fitt; did you mean :fit? (try "},
		{"flter idle", "unknown command :flter; did you mean :filter? ("},
		{"Sort id", "unknown command :Sort; did you mean :sort? ("},
		{"quti", "unknown command :quti; did you mean :quit? ("},
		{"nosuch", "unknown command :nosuch (try "},
		{"x", "unknown command :x (try "},
	} {
		a.runCommand(c.line)
		if !strings.Contains(a.Flash.Text, c.want) {
			t.Errorf(":%s: flash %q, want %q", c.line, a.Flash.Text, c.want)
		}
	}
}

// TestEditorWordsNameTheKeys: :edit was answered "did you mean :exit?",
// a command that quits (the tour); the editor's words name its keys, and
// to a viewer that they are an operator's.
func TestEditorWordsNameTheKeys(t *testing.T) {
	for _, ro := range []bool{false, true} {
		a := testApp(t, 160, 40, nil, Options{ReadOnly: ro})
		for _, line := range []string{"edit", "apply", "rollback"} {
			a.runCommand(line)
			f := a.Flash.Text
			if strings.Contains(f, "did you mean") || !strings.Contains(f, "editor") || strings.Contains(f, "read-only") != ro {
				t.Errorf("read-only %v, :%s: flash %q", ro, line, f)
			}
		}
	}
}

// TestNoRecordNamesFGTOP_HISTORYOff: a console whose record is off
// because FGTOP_HISTORY=off is set said "start fgtop with --history DIR",
// a flag that was never the cause; it now names the variable, whole at
// 80 columns, and keeps the flag's words otherwise.
func TestNoRecordNamesFGTOP_HISTORYOff(t *testing.T) {
	for _, cmd := range []string{"at -1h", "span 1h"} {
		a := testApp(t, 80, 24, nil, Options{HistoryOffByEnv: true})
		a.View()
		a.Update(keyRune(':'))
		typeKeys(a, cmd)
		a.Update(keyCode(tea.KeyEnter))
		lines := strings.Split(screen(a), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, "no history here: FGTOP_HISTORY=off is set") {
			t.Errorf(":%s at 80 columns: footer %q", cmd, last)
		}
	}
	a := testApp(t, 160, 40, nil, Options{HistoryOffByEnv: true})
	a.runCommand("at -1h")
	if want := "no history here: FGTOP_HISTORY=off is set: unset it, or start fgtop with --history DIR"; !strings.Contains(a.Flash.Text, want) {
		t.Errorf(":at: flash %q, want %q", a.Flash.Text, want)
	}
}
