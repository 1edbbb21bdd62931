package engine

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// expRange is how many exponents expCounts tells apart: 0 (and above)
// to -63; a finer one counts as -63, so its total keeps its digits.
const expRange = 64

// expCounts counts the terms of a running total by exponent, per slot.
// Backend.AI sums a device's shares afresh (a Decimal sum is at the
// finest exponent of its terms: 0.5 + 0.25 is 0.75), while the engine
// keeps its totals by adding and taking back: 0.5 + 0.125 − 0.125 + 0.25
// is 0.750. fit gives the total the form a fresh sum of the terms left
// would have.
type expCounts map[model.SlotName]*[expRange]int32

func expIndex(d model.Dec) int {
	e := -int(d.Exponent())
	return min(max(e, 0), expRange-1)
}

// add counts term d of slot's total.
func (c expCounts) add(slot model.SlotName, d model.Dec) {
	h := c[slot]
	if h == nil {
		h = new([expRange]int32)
		c[slot] = h
	}
	h[expIndex(d)]++
}

// remove takes term d of slot's total back.
func (c expCounts) remove(slot model.SlotName, d model.Dec) {
	h := c[slot]
	if h == nil {
		return
	}
	h[expIndex(d)]--
	for _, n := range h {
		if n > 0 {
			return
		}
	}
	delete(c, slot)
}

// fit is v, slot's total, at the finest exponent of the terms left:
// trailing zeros of terms gone are dropped, never a digit of value.
func (c expCounts) fit(slot model.SlotName, v model.Dec) model.Dec {
	h := c[slot]
	if h == nil {
		return v
	}
	finest := 0
	for i := expRange - 1; i >= 0; i-- {
		if h[i] > 0 {
			finest = i
			break
		}
	}
	e := int32(-finest)
	if v.Exponent() >= e {
		return v
	}
	q, err := v.Quantize(e, apd.RoundDown)
	if err != nil || !q.Equal(v) {
		return v
	}
	return q
}
