//go:build unix

package screen

import (
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
)

// watchSize sends the size of out to the program each time the terminal
// says it changed (SIGWINCH), until stop.
func watchSize(out *os.File, send func(tea.Msg)) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-sig:
				if w, h, err := term.GetSize(out.Fd()); err == nil {
					send(tea.WindowSizeMsg{Width: w, Height: h})
				}
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(quit)
		<-done
	}
}
