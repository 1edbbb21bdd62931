package kit

import (
	"time"
)

// Flash is the status line's message: a level, a text and when it clears
// itself (k9s clears after about 6 s).
type Flash struct {
	Lvl   Level
	Text  string
	Until time.Time
}

// FlashDuration is how long a flash of level l stays: a warning longer
// than news, a critical one longest.
func FlashDuration(l Level) time.Duration {
	switch l {
	case LvlCrit:
		return 8 * time.Second
	case LvlWarn:
		return 6 * time.Second
	}
	return 4 * time.Second
}
