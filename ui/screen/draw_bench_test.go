package screen

import (
	"fmt"
	"io"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// styledPage is a 160x48 frame styled as densely as the console's: a new
// colour every four cells; mark changes one line.
func styledPage(mark int) string {
	var b strings.Builder
	for y := range 48 {
		if y > 0 {
			b.WriteByte('\n')
		}
		for x := 0; x < 160; x += 4 {
			fmt.Fprintf(&b, "\x1b[38;2;%d;%d;%dm", (x*7+y)%256, (y*13)%256, (x+mark*(y/47))%256)
			b.WriteString("ab─█")
		}
		b.WriteString("\x1b[m")
	}
	return b.String()
}

// BenchmarkDrawOneLineChanged: a frame whose one line changed, diffed and
// written (the cost of a key's frame, beside the model's View).
func BenchmarkDrawOneLineChanged(b *testing.B) {
	d := newDrawer(io.Discard, []string{"TERM=xterm-256color"}, false)
	v := tea.View{AltScreen: true}
	pages := [2]string{styledPage(0), styledPage(1)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		v.Content = pages[i%2]
		f := newFrame(v, 160, 48, colorprofile.TrueColor)
		d.draw(&f)
	}
}
