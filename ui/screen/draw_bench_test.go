package screen

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

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

// helpPage is a 160x48 frame as unlike styledPage as the console's help is
// unlike its main view: other text and other colours on every line.
func helpPage() string {
	var b strings.Builder
	for y := range 48 {
		if y > 0 {
			b.WriteByte('\n')
		}
		for x := 0; x < 160; x += 20 {
			fmt.Fprintf(&b, "\x1b[1;38;2;%d;200;%dm%-7s\x1b[m \x1b[38;5;%dm%-12s", (x*3+y)%256, y*5%256, "key", 100+x/20, "what it does")
		}
		b.WriteString("\x1b[m")
	}
	return b.String()
}

// stamp is a terminal that notes when it was last written to.
type stamp struct{ at time.Time }

func (s *stamp) Write(p []byte) (int, error) { s.at = time.Now(); return len(p), nil }

// BenchmarkDrawAllLinesChanged: frames that change every line (the
// console's help opened and closed by a key), in 256 colours and true
// colour; write-ns/op is how long the frame took to reach the terminal,
// the rest of ns/op the renderer catching up after it.
func BenchmarkDrawAllLinesChanged(b *testing.B) {
	for _, p := range []colorprofile.Profile{colorprofile.ANSI256, colorprofile.TrueColor} {
		for _, direct := range []bool{true, false} {
			b.Run(fmt.Sprint(p, "/direct=", direct), func(b *testing.B) {
				out := &stamp{}
				d := newDrawer(out, []string{"TERM=xterm-256color"}, false)
				d.noDirect = !direct
				v := tea.View{AltScreen: true}
				pages := [2]string{styledPage(0), helpPage()}
				var toWrite time.Duration
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					v.Content = pages[i%2]
					f := newFrame(v, 160, 48, p)
					start := time.Now()
					d.draw(&f)
					toWrite += out.at.Sub(start)
				}
				b.ReportMetric(float64(toWrite.Nanoseconds())/float64(b.N), "write-ns/op")
			})
		}
	}
}
