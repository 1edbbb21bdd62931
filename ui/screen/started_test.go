package screen

import (
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
)

// TestStartedAtInit: Options.Started is told, once, the instant the
// program started, which is when Bubble Tea's own ticker started: just
// before the model's Init, inside Run.
func TestStartedAtInit(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	m := &page{text: fullPage(80, 24, "start")}
	before := time.Now()
	_, r, _, stop := pipeProgram(t, m, Options{Profile: colorprofile.TrueColor, Started: func(t time.Time) {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, t)
	}})
	waitFor(t, "the first frame", func() bool { n, _, _ := r.state(); return n > 80*24 })
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 1 || at[0].Before(before) || at[0].After(time.Now()) {
		t.Fatalf("Started told %v; want once, between %v and now", at, before)
	}
}
