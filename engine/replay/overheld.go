package replay

import (
	"fmt"
	"time"

	"github.com/fgtop/fgtop/model"
)

// Overheld is a slot whose amount an agent's recorded kernels asked more
// of, together (their requests, as the manager counts them; what they
// held may be less), than the agent was given, though the record saw
// every one of them run. A slot-based agent allocates from every device of the
// node: only the manager's count keeps its kernels within its amount, so
// this is the manager having counted a stopping container's resources as
// free before the agent released them (a container hung while stopping or
// destroyed by force; the demo imitates it), or the agent running with
// another agent.toml than the record's (the file changed, the agent not
// restarted). Under the rules such a session is refused, so --suggest
// would raise the amount for it: the operator is told why.
type Overheld struct {
	Agent  model.AgentID
	Slot   model.SlotName
	Amount model.Dec // the amount given at At
	Peak   model.Dec // the most its kernels asked at once over it
	At     time.Time // when they asked Peak
	Over   time.Duration
}

// OverheldWhy says what an Overheld is and what the replay makes of it.
const OverheldWhy = "the record saw those sessions run: a slot-based agent allocates from every device, and only the manager's count keeps it within its amounts, so the manager counted a stopping container's resources as free before the agent released them (a container hung while stopping, or destroyed by force), or the agent ran with another agent.toml than the record's (changed, not restarted); the rules refuse the sessions that came in over the amount, and --suggest counts their demand"

// OverheldOf lists the slots of asWas, a run under the partitions in
// force (Options.Fidelity: every recorded session is taken, none refused
// away), whose demand went over the amount given at the time.
func OverheldOf(asWas *Result) []Overheld {
	var out []Overheld
	for _, a := range asWas.Agents {
		for _, s := range a.Slots {
			if s.Given && s.Over > 0 {
				out = append(out, Overheld{Agent: a.Agent, Slot: s.Slot, Amount: s.OverAmount, Peak: s.OverPeak, At: s.OverAt, Over: s.Over})
			}
		}
	}
	return out
}

// String is the overheld slot in an operator's words.
func (o Overheld) String() string {
	return fmt.Sprintf("%s's kernels asked %s %s at once (their SLOTS, as the manager counts them), above the %s it was given then (%s; above its amount for %s in all)",
		o.Agent, amount(o.Slot, o.Peak), o.Slot, amount(o.Slot, o.Amount), stamp(o.At), o.Over.Round(time.Millisecond))
}

// joinOverheld is the overheld slots in one sentence.
func joinOverheld(ov []Overheld) string {
	out := ""
	for i, o := range ov {
		if i > 0 {
			out += "; "
		}
		out += o.String()
	}
	return out
}
