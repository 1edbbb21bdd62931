package console

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fgtop/fgtop/ui/internal/fake"
)

// axisLines are the view's time axes: rows with a tick label "-Nm".
func axisLines(view string) []string {
	tick := regexp.MustCompile(`-[0-9]+m\b`)
	var out []string
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		if tick.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// A console shown at a past moment (the fleet's node opened in the past)
// labels its graphs' newest column with that moment, not "now".
func TestGraphAxisEndsAtThePastMoment(t *testing.T) {
	a := testApp(t, 200, 60, fake.Node(fake.Options{}), Options{})
	live := axisLines(lipgloss.Sprint(a.View().Content))
	if len(live) == 0 {
		t.Fatal("no time axis drawn at 200x60")
	}
	for _, l := range live {
		if !strings.Contains(l, "now") {
			t.Fatalf("live axis %q lacks now", l)
		}
	}
	at := a.Now().Add(-2 * time.Hour)
	a.ShowPast(at)
	clock := at.Local().Format("15:04:05")
	past := axisLines(lipgloss.Sprint(a.View().Content))
	if len(past) == 0 {
		t.Fatal("no time axis drawn in the past")
	}
	for _, l := range past {
		if strings.Contains(l, "now") || !strings.Contains(l, clock) {
			t.Errorf("past axis %q: want %s under the newest column, never now", l, clock)
		}
	}
	a.ShowPast(time.Time{})
	for _, l := range axisLines(lipgloss.Sprint(a.View().Content)) {
		if !strings.Contains(l, "now") {
			t.Errorf("live again: axis %q lacks now", l)
		}
	}
}
