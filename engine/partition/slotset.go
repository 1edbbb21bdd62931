package partition

import (
	"fmt"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// SlotSet sets one agent's amount of one slot in a slot-based manual
// partition (Backend.AI main's form): cpu (a core count), mem (bytes) or a
// device slot such as cuda.shares, written as devices = { "cuda.shares" =
// "2.0" }. It is the CLI's --slot AGENT=SLOT=AMOUNT and the console
// editor's amount fields.
type SlotSet struct {
	Agent  model.AgentID
	Slot   model.SlotName
	Amount model.Dec
}

// SplitSlotSet splits AGENT=SLOT=AMOUNT at its last two "=": a slot name
// and an amount never hold one, and an agent id may (Backend.AI loads
// id = "x=1"). The parts are trimmed; ok is false with fewer than two.
func SplitSlotSet(s string) (agent, slot, amount string, ok bool) {
	j := strings.LastIndexByte(s, '=')
	if j < 0 {
		return "", "", "", false
	}
	i := strings.LastIndexByte(s[:j], '=')
	if i < 0 {
		return "", "", "", false
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1 : j]), strings.TrimSpace(s[j+1:]), true
}

// ParseSlotSet reads AGENT=SLOT=AMOUNT. mem takes a binary size (64G), any
// other slot an exact decimal kept as written ("2.0" stays 2.0). A negative
// or non-finite amount is refused: main refuses it too; so is mem of 0 or
// less, as --mem refuses it.
func ParseSlotSet(s string) (SlotSet, error) {
	agent, slot, amount, ok := SplitSlotSet(s)
	if !ok || agent == "" || slot == "" || amount == "" {
		return SlotSet{}, fmt.Errorf("want AGENT=SLOT=AMOUNT, e.g. i-node-a=cuda.shares=2.0")
	}
	set := SlotSet{Agent: model.AgentID(agent), Slot: model.SlotName(slot)}
	if set.Slot == model.SlotMem {
		b, _, err := ParseMem(amount)
		if err != nil {
			return SlotSet{}, fmt.Errorf("mem=%s: %w", amount, err)
		}
		if b.Sign() <= 0 {
			// Said as written: the bytes (-10737418240) are not what the
			// operator typed.
			return SlotSet{}, fmt.Errorf("mem=%s: %s is not above zero: write the agent's memory, e.g. %s=mem=64G", amount, amount, agent)
		}
		set.Amount = b
		return set, nil
	}
	v, err := model.ParseDec(amount)
	if err != nil {
		return SlotSet{}, fmt.Errorf("%s=%s: not a decimal amount", slot, amount)
	}
	// The rule simulate applies to a request (model.CheckAmount): 1e999
	// and 1E-30 were written here and refused there.
	if err := model.CheckAmount(set.Slot, v, false); err != nil {
		return SlotSet{}, fmt.Errorf("%s=%s: %w", slot, amount, err)
	}
	if set.Slot == model.SlotCPU {
		n, ierr := v.Int64()
		if ierr != nil {
			if r, err := v.Rem(model.One); err == nil && r.IsZero() {
				// Whole, too large for any count of cores.
				return SlotSet{}, fmt.Errorf("cpu=%s: more cores than any node has", amount)
			}
			return SlotSet{}, fmt.Errorf("cpu=%s: the slot-based format takes a whole core count, e.g. cpu=15", amount)
		}
		// agent.toml's cpu is a TOML integer: 12.0 or 1e1 as typed
		// would be written as a float (cpu = 1E+1).
		v = model.DecFromInt64(n)
	}
	set.Amount = v
	return set, nil
}

// String writes the set the way ParseSlotSet reads it.
func (s SlotSet) String() string {
	v := s.Amount.String()
	if s.Slot == model.SlotMem {
		// A size where it reads back exactly, else the bytes.
		if f := model.FormatBinarySize(s.Amount); mustBytes(f).Equal(s.Amount) {
			v = f
		}
	}
	return fmt.Sprintf("%s=%s=%s", s.Agent, s.Slot, v)
}

// KnownSlots are the slots an agent of cfg can be given on this node: cpu,
// mem and every slot the node's devices register; where the accelerators
// are unknown (no device source), also the slots the file already names.
func KnownSlots(cfg *agentconfig.Config, inv Inventory) []model.SlotName {
	out := []model.SlotName{model.SlotCPU, model.SlotMem}
	add := func(s model.SlotName) {
		for _, k := range out {
			if k == s {
				return
			}
		}
		out = append(out, s)
	}
	for _, d := range inv.Devices {
		add(d.Slot)
	}
	if inv.AcceleratorsUnknown && cfg != nil {
		for _, a := range append([]*agentconfig.Allocation{cfg.GlobalAlloc}, agentAllocs(cfg)...) {
			if a == nil {
				continue
			}
			for s := range a.Slots {
				add(s)
			}
		}
	}
	return out
}

func agentAllocs(cfg *agentconfig.Config) []*agentconfig.Allocation {
	out := make([]*agentconfig.Allocation, len(cfg.Agents))
	for i, a := range cfg.Agents {
		out[i] = a.Alloc
	}
	return out
}

// CheckSlotSets refuses a set naming a slot this node does not register
// (model.UnknownSlotError, "did you mean cuda.shares?"): bad input, before
// anything is planned.
func CheckSlotSets(sets []SlotSet, cfg *agentconfig.Config, inv Inventory) error {
	known := KnownSlots(cfg, inv)
	for _, s := range sets {
		if err := model.CheckSlot(s.Slot, known); err != nil {
			return fmt.Errorf("--slot %s: %w", s, err)
		}
	}
	return nil
}

// mustBytes reads a size, zero when it does not parse.
func mustBytes(s string) model.Dec {
	v, _, err := ParseMem(s)
	if err != nil {
		return model.Dec{}
	}
	return v
}
