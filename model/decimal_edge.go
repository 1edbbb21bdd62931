package model

import (
	"github.com/cockroachdb/apd/v3"
)

// apd computes 10^x for an exponent gap or a result exponent and refuses
// beyond ±apd.MaxExponent (100,000), where Python's context goes to
// ±999,999 (and 28 digits below for subnormals). Where it refuses, the
// operation is done again on operands moved near exponent 0 under a
// context moved by as much: rounding to 28 digits, subnormals and overflow
// depend only on exponents relative to the context's limits, so the result
// moved back is what Python gives (0 + 5E-999999 is 5E-999999, not NaN).

// edgeAddSub is x±y for finite operands apd refused.
func edgeAddSub(x, y *apd.Decimal, f binop) (Dec, error) {
	a, b := *x, *y
	switch {
	case a.IsZero() && b.IsZero():
		// A zero of the smaller exponent.
		a.Exponent = min(a.Exponent, b.Exponent)
		b.Exponent = a.Exponent
	case a.IsZero():
		beside(&a, &b)
	case b.IsZero():
		beside(&b, &a)
	case adjusted(&a) >= adjusted(&b):
		beside(&b, &a)
	default:
		beside(&a, &b)
	}
	shift := -max(a.Exponent, b.Exponent)
	return moved(shift, func(c *apd.Context, d *apd.Decimal) (apd.Condition, error) {
		a.Exponent += shift
		b.Exponent += shift
		return f(c, d, &a, &b)
	})
}

// beside brings small's exponent within about 30 digits of big's (a
// nonzero term) without changing the sum Python rounds: a term entirely
// below big's rounding digit only rounds it (its sign and whether it is
// zero matter, not its size), so it is put just below that digit; a zero
// counts only through the smaller exponent, so one above big's takes
// big's.
func beside(small, big *apd.Decimal) {
	floor := min(int64(big.Exponent), adjusted(big)-int64(PyContext.Precision)) - 2
	switch {
	case small.IsZero() && small.Exponent > big.Exponent:
		small.Exponent = big.Exponent
	case adjusted(small) < floor:
		neg := small.Negative
		if small.IsZero() {
			small.SetFinite(0, int32(floor))
		} else {
			small.SetFinite(1, int32(floor))
		}
		small.Negative = neg
	}
}

// edgeMul is x*y for finite operands apd refused.
func edgeMul(x, y *apd.Decimal) (Dec, error) {
	a, b := *x, *y
	etiny := int64(PyContext.MinExponent) - int64(PyContext.Precision) + 1
	// Below half the smallest subnormal the product is a zero at Etiny
	// (Python's Underflow, not trapped); moved, that Etiny would lie past
	// what apd computes.
	if (a.IsZero() || b.IsZero()) && int64(a.Exponent)+int64(b.Exponent) < etiny ||
		!a.IsZero() && !b.IsZero() && adjusted(&a)+adjusted(&b)+1 < etiny-1 {
		var d apd.Decimal
		d.SetFinite(0, int32(etiny))
		d.Negative = a.Negative != b.Negative
		return Dec{&d}, nil
	}
	if (a.IsZero() || b.IsZero()) && int64(a.Exponent)+int64(b.Exponent) > int64(PyContext.MaxExponent) {
		// A zero above Emax is clamped to it (Python's Clamped).
		var d apd.Decimal
		d.SetFinite(0, PyContext.MaxExponent)
		d.Negative = a.Negative != b.Negative
		return Dec{&d}, nil
	}
	shift := -(a.Exponent + b.Exponent)
	return moved(shift, func(c *apd.Context, d *apd.Decimal) (apd.Condition, error) {
		a.Exponent, b.Exponent = 0, 0
		return c.Mul(d, &a, &b)
	})
}

// moved runs op under Python's context moved by shift digits (its limits
// shift too) and moves the result back.
func moved(shift int32, op func(c *apd.Context, d *apd.Decimal) (apd.Condition, error)) (Dec, error) {
	c := *PyContext
	c.MinExponent += shift
	c.MaxExponent += shift
	var d apd.Decimal
	if _, err := op(&c, &d); err != nil {
		return Dec{}, err
	}
	if d.Form == apd.Finite {
		d.Exponent -= shift
	}
	return Dec{&d}, nil
}

// adjusted is the exponent of d's leading digit (Python's adjusted()).
func adjusted(d *apd.Decimal) int64 { return int64(d.Exponent) + d.NumDigits() - 1 }
