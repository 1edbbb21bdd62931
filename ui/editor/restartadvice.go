package editor

import (
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// restartMark stands, in an apply's or a rollback's outcome, for what the
// agents must do about the version written: it is read from the live
// snapshot each time it is drawn (restartAdvice), since the engine learns
// whether the agents run that version only after the write.
var restartMark = kit.Span{Lvl: kit.LvlWarn, Text: "\x00restart"}

// restartAdvice is restartMark's words: no restart where every agent is
// judged, on the version this editor wrote (hash), to run it already (a
// rollback to the version they started with); else the restart they need.
func restartAdvice(s *model.Snapshot, hash string) kit.Span {
	if s != nil && hash != "" && len(s.Agents) > 0 {
		current := true
		for _, a := range s.Agents {
			if a.Restart.State != model.RestartCurrent || a.Restart.ConfigHash != hash {
				current = false
				break
			}
		}
		if current {
			return kit.Span{Lvl: kit.LvlOK, Text: " · the agents run this version already: no restart needed"}
		}
	}
	return kit.Span{Lvl: kit.LvlWarn, Text: " · restart the agents: they read agent.toml only at start-up"}
}

// withAdvice is spans with restartMark put in words.
func (e *Editor) withAdvice(spans []kit.Span) []kit.Span {
	for i, sp := range spans {
		if sp == restartMark {
			out := append([]kit.Span(nil), spans...)
			out[i] = restartAdvice(e.Snap, e.wrote)
			return out
		}
	}
	return spans
}
