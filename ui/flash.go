package ui

import (
	"time"
)

// flash is the status line's message: a level, a text and when it clears
// itself (k9s clears after about 6 s).
type flash struct {
	lvl   level
	text  string
	until time.Time
}

func flashDuration(l level) time.Duration {
	switch l {
	case lvlCrit:
		return 8 * time.Second
	case lvlWarn:
		return 6 * time.Second
	}
	return 4 * time.Second
}
