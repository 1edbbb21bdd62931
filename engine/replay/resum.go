package replay

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// termExpRange is how many exponents termExps tells apart: 0 (and above)
// to -63; a finer term counts as -63, so its total keeps its digits.
const termExpRange = 64

// termExps counts the terms of one of a run's totals (what an agent's
// sessions hold, or ask) by exponent. The run keeps a total by adding
// each session's amount and taking it back when the session leaves, but
// the manager counts an agent's occupancy afresh at each scheduling
// round, a sum of the kernels left (ScheduleDBSource.
// _fetch_kernel_occupancy): a Decimal sum from 0 is at the finest
// exponent of its terms, so 1.1 + 1.1 + 0.25 − 0.25 is 2.2 there, 2.20
// as a running total. fit gives a total that form.
type termExps [termExpRange]int32

// termExpIndex is the index of f's exponent.
func termExpIndex(f fixed) int {
	e := f.e
	if f.dec {
		e = f.d.Exponent()
	}
	return int(min(max(-int64(e), 0), termExpRange-1))
}

// count counts term f (takes it back with back).
func (h *termExps) count(f fixed, back bool) {
	if back {
		h[termExpIndex(f)]--
	} else {
		h[termExpIndex(f)]++
	}
}

// fit is v, the total of h's terms, in the form a sum of them from 0
// has: at the finest exponent of the terms left (0 at the coarsest),
// trailing zeros of terms gone dropped, never a digit of value. A total
// with no terms left is 0.
func (h *termExps) fit(v fixed) fixed {
	finest := -1
	for i := termExpRange - 1; i >= 0; i-- {
		if h[i] > 0 {
			finest = i
			break
		}
	}
	if finest < 0 {
		if v.sign() == 0 {
			return fixed{}
		}
		return v
	}
	e := int32(-finest)
	if v.dec {
		if v.d.Exponent() >= e {
			return v
		}
		q, err := v.d.Quantize(e, apd.RoundDown)
		if err != nil || !q.Equal(v.d) {
			return v
		}
		return fixed{d: q, dec: true}
	}
	c := v.c
	for x := v.e; x < e; x++ {
		if c%10 != 0 {
			return v
		}
		c /= 10
	}
	return fixed{c: c, e: max(v.e, e)}
}

// totalOf is a's total tot of slot (held or demand) with its terms
// exps, in the manager's form (termExps.fit).
func totalOf(tot map[model.SlotName]fixed, exps map[model.SlotName]*termExps, slot model.SlotName) fixed {
	v := tot[slot]
	if h := exps[slot]; h != nil {
		return h.fit(v)
	}
	return v
}

// sum adds f to slot's total in tot, counting it in exps (takes it back
// with back).
func sum(tot map[model.SlotName]fixed, exps map[model.SlotName]*termExps, slot model.SlotName, f fixed, back bool) fixed {
	h := exps[slot]
	if h == nil {
		h = new(termExps)
		exps[slot] = h
	}
	h.count(f, back)
	v := tot[slot].add(f, back)
	tot[slot] = v
	return v
}
