package fleet

import (
	"fmt"
	"io"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/report"
)

// Write writes the answer: its JSON document (Value), indented or on one
// line, or the text for people (WriteText, red as there).
func (a Answer) Write(w io.Writer, asJSON, indent bool, red func(string) string) error {
	if !asJSON {
		a.WriteText(w, red)
		return nil
	}
	b, err := report.Marshal(a.Value(), indent)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ParseAt reads --at as of now (history.ParseWhen's forms): a moment of
// the fleet's past, never one to come. The error is the caller's usage.
func ParseAt(text string, now time.Time) (time.Time, error) {
	at, err := history.ParseWhen(text, now)
	if err != nil {
		return at, fmt.Errorf("--at: %w", err)
	}
	if at.After(now) {
		return at, fmt.Errorf("--at %s is in the future: the fleet's past only (leave --at out for now)", text)
	}
	return at, nil
}
