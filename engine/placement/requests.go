package placement

import (
	"fmt"

	"github.com/fgtop/fgtop/model"
)

// ParseSteps reads an operator's requests, in order, as steps on a node
// whose slots are known (with their types): each must parse (ParseStep),
// ask for no negative or out-of-range amount (CheckAmounts) and name only
// known slots (CheckSlots). A request that does not parse because of a
// slot the node lacks is told as that slot's typo ("did you mean
// cuda.shares?"), not as a syntax error. Every error starts with the
// request, quoted.
//
// nothing lists the requests, read before any error, that ask for nothing
// (Backend.AI drops amounts of 0): they run, allocating nothing, which
// the operator is to be told. ValidateSteps is left to the caller: it
// judges the steps together, not a request.
func ParseSteps(texts []string, types model.SlotTypes, known []model.SlotName) (steps []Step, nothing []string, err error) {
	steps = make([]Step, len(texts))
	for i, r := range texts {
		if steps[i], err = ParseStep(r, types); err != nil {
			if nerr := UnknownSlotIn(r, known); nerr != nil {
				return nil, nothing, fmt.Errorf("%q: %w", r, nerr)
			}
			return nil, nothing, err
		}
		if err := steps[i].CheckAmounts(types); err != nil {
			return nil, nothing, fmt.Errorf("%q: %w", r, err)
		}
		if steps[i].AsksForNothing() {
			nothing = append(nothing, r)
		}
	}
	for _, st := range steps {
		if err := CheckSlots(st.Request, known); err != nil {
			return nil, nothing, fmt.Errorf("%q: %w", st.Text, err)
		}
	}
	return steps, nothing, nil
}
