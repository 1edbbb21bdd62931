package partition

import (
	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Propose plans req on the node: cfg is the config in effect, snap the
// node as scanned, blind the scratch roots that could not be read (each
// becomes a warning of the plan, which cannot tell which moved devices
// their kernels hold). A slot set naming a slot the node does not register
// is CheckSlotSets' error, returned before anything is planned: bad input,
// not an invalid plan.
func Propose(cfg *agentconfig.Config, snap *model.Snapshot, req Request, blind []string) (*Plan, error) {
	inv := InventoryOf(snap)
	if err := CheckSlotSets(req.Slots, cfg, inv); err != nil {
		return nil, err
	}
	draft, errs := Draft(cfg, inv, req)
	p := Build(cfg, draft, snap, errs...)
	p.NotSeen(blind)
	return p, nil
}

// UnknownSlotIn finds the first of an operator's AGENT=SLOT=AMOUNT
// settings whose SLOT the node does not register and returns it with
// model.CheckSlot's error ("did you mean cuda.shares?"). It reads only the
// slot, so that a setting whose amount does not parse (memory=64G) is
// still told apart as a typo of the slot; settings without a slot are
// left to ParseSlotSet. It returns "", nil when every slot is known.
func UnknownSlotIn(settings []string, cfg *agentconfig.Config, snap *model.Snapshot) (string, error) {
	if len(settings) == 0 {
		return "", nil
	}
	known := KnownSlots(cfg, InventoryOf(snap))
	for _, v := range settings {
		_, slot, _, ok := SplitSlotSet(v)
		if !ok || slot == "" {
			continue
		}
		if err := model.CheckSlot(model.SlotName(slot), known); err != nil {
			return v, err
		}
	}
	return "", nil
}
