package replay

import (
	"errors"
	"fmt"
	"strings"
)

// Ask is what plan's replay flags ask for: a span of the record (Span,
// or Since and Until, from the history in Dir), or the sessions of a
// file (Arrivals), and with Suggest the amounts that serve them.
type Ask struct {
	Span, Since, Until, Dir, Arrivals string
	Suggest                           bool
	// Given reports whether a flag (replay, arrivals) was given, empty
	// or not; nil: none was. --replay "$SPAN" with SPAN unset planned
	// without replaying, exit 0 whatever the record would have refused.
	Given func(name string) bool
}

// On says whether a asks for a replay. Its error is bad usage: an empty
// span or file, a span flag without a span, --arrivals with the
// record's flags.
func (a Ask) On() (bool, error) {
	given := func(name string) bool { return a.Given != nil && a.Given(name) }
	if a.Arrivals == "" && given("arrivals") {
		return false, errors.New(`--arrivals "": want a file of sessions (CSV start,end,agent,slots or JSON lines)`)
	}
	if a.Arrivals != "" {
		// The record's flags given beside it, named as given (an empty
		// --replay too: told it wants a span, then to drop it, was a loop).
		var drop []string
		for _, f := range []struct {
			name string
			on   bool
		}{{"--replay", a.Span != "" || given("replay")}, {"--since", a.Since != ""}, {"--until", a.Until != ""}, {"--history", a.Dir != ""}, {"--suggest", a.Suggest}} {
			if f.on {
				drop = append(drop, f.name)
			}
		}
		if len(drop) > 0 {
			return false, fmt.Errorf("--arrivals replays the sessions of a file, not the record: drop %s", strings.Join(drop, " and "))
		}
		return true, nil
	}
	if a.Span != "" {
		return true, nil
	}
	if given("replay") {
		return false, errors.New(`--replay "": want a span such as 7d, 36h or 1d12h`)
	}
	if a.Suggest {
		return false, errors.New("--suggest needs --replay: the amounts are found from the recorded sessions (--replay 7d)")
	}
	for _, f := range []struct{ name, v string }{{"--since", a.Since}, {"--until", a.Until}, {"--history", a.Dir}} {
		if f.v != "" {
			return false, fmt.Errorf("%s is for --replay: add --replay 7d (or another span) to replay the recorded sessions", f.name)
		}
	}
	return false, nil
}
