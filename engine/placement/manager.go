package placement

import (
	"fmt"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// ManagerLimit is what Backend.AI's manager sends one agent in main's
// slot-based form: the agent reports the amounts its partition gives it,
// less what its kernels hold, and the manager schedules only within them,
// whatever the agent's allocator (over every device) would take. The
// fleet's fit and the per-agent preview apply the same rule.
type ManagerLimit struct {
	Agent model.AgentID
	// Given is the agent's amount of each slot; a slot it is not given is
	// not limited.
	Given model.ResourceSlot
	// Held is what its kernels hold now.
	Held model.ResourceSlot
}

// ManagerLimitOf is the manager's limit on agent a, nil when its partition
// gives it no amounts (device-based, auto-split, shared).
func ManagerLimitOf(a *model.Agent) *ManagerLimit {
	if a == nil || a.Given == nil {
		return nil
	}
	return &ManagerLimit{Agent: a.ID, Given: a.Given, Held: a.Held}
}

// refusal is why the manager would not send req to the agent whose kernels
// hold held plus extra (what earlier steps took), "" when it would.
func (m *ManagerLimit) refusal(req alloc.Request, extra slotSums) string {
	for _, e := range req {
		g, ok := m.Given[e.Slot]
		if !ok || e.Amount.Sign() <= 0 {
			continue
		}
		held := m.Held[e.Slot].Add(extra[e.Slot])
		left := model.Max(g.Sub(held), model.Zero)
		if !left.Less(e.Amount) {
			continue
		}
		return managerWords(e.Slot, left, g, held, e.Amount)
	}
	return ""
}

// Refusal is why the manager would not send req to the agent whose
// kernels hold Held, in the manager's words (those simulate prints), ""
// when it would.
func (m *ManagerLimit) Refusal(req alloc.Request) string { return m.refusal(req, slotSums{}) }

// managerWords says, in the manager's terms, why it does not send a
// request of want of slot to an agent given g whose kernels hold held.
func managerWords(slot model.SlotName, left, g, held, want model.Dec) string {
	words := func(v model.Dec) string { return amountWords(slot, v) }
	return fmt.Sprintf("the manager would not send it there: the agent reports %s %s free (given %s, its kernels hold %s), %s requested",
		words(left), slot, words(g), words(held), words(want))
}

// amountWords is an amount of slot as the reasons print it: memory as a
// size, with its bytes where the size rounds them (a byte can decide).
func amountWords(slot model.SlotName, v model.Dec) string {
	if slot == model.SlotMem {
		return model.FormatBinarySizeExact(v)
	}
	return v.String()
}

// managerWordsPhysical is managerWords for an agent that reports more free
// (left) than is physically free on its devices (phys).
func managerWordsPhysical(slot model.SlotName, left, g, held, phys, want model.Dec) string {
	words := func(v model.Dec) string { return amountWords(slot, v) }
	return fmt.Sprintf("the manager would not send it there: the agent reports %s %s free (given %s, its kernels hold %s; only %s is physically free on the node: the other agents' kernels hold the rest), %s requested",
		words(left), slot, words(g), words(held), words(phys), words(want))
}

// KindManagerRefused is the error kind of a request the manager would not
// send to the simulated agent (RunOptions.Manager): its allocator never
// sees it.
const KindManagerRefused = "ManagerRefused"

// slotSums is an amount per slot, summed over allocations.
type slotSums model.ResourceSlot

// add adds (sign 1) or takes away (sign -1) what a holds.
func (t slotSums) add(a alloc.Allocation, sign int64) {
	for _, s := range a {
		for _, sh := range s.Shares {
			t[s.Slot] = t[s.Slot].Add(sh.Amount.Mul(model.DecFromInt64(sign)))
		}
	}
}
