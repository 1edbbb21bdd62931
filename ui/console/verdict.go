package console

import "github.com/fgtop/fgtop/ui/kit"

// verdictState is what whoever feeds the console says of the node's
// figures when they are not current (the fleet's node opened while it is
// stale or unreachable; ShowVerdict).
type verdictState struct {
	word, reason string
}

// ShowVerdict says that the snapshots fed to the console are not current,
// in the feeder's words: word is the state ("UNREACHABLE", "STALE") and
// reason why. The header leads with them, in text, not colour alone:
// the figures shown are otherwise read as the node's figures of now.
// An empty word says they are current.
func (a *App) ShowVerdict(word, reason string) {
	v := verdictState{word: word, reason: reason}
	if word == "" {
		v = verdictState{}
	}
	if a.verdict != v {
		a.verdict = v
		a.Invalidate()
	}
}

// verdictBanner is the header's piece for ShowVerdict's state: at 80
// columns it shortens to the state word, the age of the figures and the
// reason going to the second line.
func (a *App) verdictBanner() []headerPiece {
	v := a.verdict
	if v.word == "" {
		return nil
	}
	reason, age := v.reason, ""
	if s := a.Snap; s != nil && !s.Time.IsZero() {
		age = "last figures from " + kit.FmtAge(max(a.Now().Sub(s.Time), 0)) + " ago"
	}
	if a.St.ASCII {
		reason = kit.ASCIIOnly(reason)
	}
	join := func(x, y string) string {
		if x == "" || y == "" {
			return x + y
		}
		return x + " " + a.St.G.Dot + " " + y
	}
	spans := []kit.Span{{Lvl: kit.LvlCrit, Text: v.word}}
	if reason == "" && age == "" {
		return []headerPiece{{spans: spans}}
	}
	full := append(spans, kit.Span{Lvl: kit.LvlCrit, Text: ": " + join(reason, age)})
	// On the second line the age leads: a long reason ("...: is fgtop
	// serve running there, on this port? ...") is cut at 80 columns, and
	// the fleet's pane has it whole.
	return []headerPiece{{spans: full, short: spans, spill: []kit.Span{{Lvl: kit.LvlCrit, Text: join(age, reason)}}}}
}
