package alloc

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/model"
)

// FractionAllocMap's defaults, and the NaN that stands in for the result
// of an impossible operation.
var (
	defaultQuantum   = model.NewDec(1, -2)
	defaultMinMemory = model.NewDec(1, -2)
	nan              = model.DecFromApd(&apd.Decimal{Form: apd.NaN})
)

// quantize2 is Python's x.quantize(Decimal("0.01")) in the default context
// (ROUND_HALF_EVEN).
func quantize2(x model.Dec) model.Dec { return quantizeTo(x, -2, apd.RoundHalfEven) }

func quantizeTo(x model.Dec, exp int32, r apd.Rounder) model.Dec {
	q, err := x.Quantize(exp, r)
	if err != nil {
		// Only non-finite or out-of-precision values get here; Allocate
		// rejects those up front, so NaN is never observed in practice.
		return nan
	}
	return q
}

// quo is Python's x / y in the default context.
func quo(x, y model.Dec) model.Dec {
	q, err := x.Quo(y)
	if err != nil {
		return nan
	}
	return q
}

// quoInt returns x / n for a small positive n.
func quoInt(x model.Dec, n int) model.Dec { return quo(x, model.NewDec(int64(n), 0)) }

// remainderNear is Python's Decimal.remainder_near (GDA remainder-near):
// x - y·n where n is x/y rounded to the nearest integer, ties to even. The
// result keeps the smaller of the two exponents and, when zero, the sign of
// x; an integer part beyond the context precision is DivisionImpossible, as
// in Python.
func remainderNear(x, y model.Dec) (model.Dec, error) {
	var r apd.Decimal
	if err := remainderNearApd(&r, x.Apd(), y.Apd()); err != nil {
		return nan, fmt.Errorf("alloc: remainder_near(%s, %s): %w", x, y, err)
	}
	return model.DecFromApd(&r), nil
}

// remainderNearApd is remainderNear into r, on apd values.
func remainderNearApd(r, xa, ya *apd.Decimal) error {
	if xa.Form != apd.Finite || ya.Form != apd.Finite || ya.IsZero() {
		return errors.New("invalid operation")
	}
	ctx := model.PyContext
	var q apd.Decimal
	if _, err := ctx.Rem(r, xa, ya); err != nil {
		return err
	}
	if _, err := ctx.QuoInteger(&q, xa, ya); err != nil {
		return err
	}
	// r is the truncated remainder (sign of x). Step past the half-way mark,
	// or onto it when the truncated quotient is odd, to the other side.
	var ar, ay, twice apd.Decimal
	ar.Abs(r)
	ay.Abs(ya)
	if _, err := ctx.Add(&twice, &ar, &ar); err != nil {
		return err
	}
	c := twice.Cmp(&ay)
	if c > 0 || (c == 0 && q.Coeff.Bit(0) == 1) {
		var err error
		if xa.Negative {
			_, err = ctx.Add(r, r, &ay)
		} else {
			_, err = ctx.Sub(r, r, &ay)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// roundDown is alloc_map.round_down: x minus its non-negative distance to
// the multiple of q just below, computed through remainder_near so that
// the exponent comes out as Python's does (0.60, 0.120, 100.00).
func roundDown(x, q model.Dec) (model.Dec, error) { return roundDownApd(x, q, q.Apd()) }

// roundDownApd is roundDown with q also as an apd value qa (a map keeps
// its quantum's), computed without the intermediate model.Dec values: the
// same operations in the same context, so the same result.
func roundDownApd(x, q model.Dec, qa *apd.Decimal) (model.Dec, error) {
	xa := x.Apd()
	var r apd.Decimal
	if err := remainderNearApd(&r, xa, qa); err != nil {
		return nan, fmt.Errorf("alloc: remainder_near(%s, %s): %w", x, q, err)
	}
	ctx := model.PyContext
	// r.Add(q) and x.Sub(r) as model.Dec computes them: a failed
	// operation gives NaN, and NaN stays NaN.
	if r.Sign() < 0 {
		if _, err := ctx.Add(&r, &r, qa); err != nil {
			r = apd.Decimal{Form: apd.NaN}
		}
	}
	var out apd.Decimal
	if _, err := ctx.Sub(&out, xa, &r); err != nil {
		return nan, nil
	}
	return model.DecFromApd(&out), nil
}

// pyInt is Python's int(Decimal): truncation toward zero. Values beyond
// int64 saturate, which only matters for absurd capacities.
func pyInt(x model.Dec) int64 {
	t := quantizeTo(x, 0, apd.RoundDown)
	v, err := t.Int64()
	if err != nil {
		if x.Sign() < 0 {
			return -1 << 63
		}
		return 1<<63 - 1
	}
	return v
}

// pyMin is Python's min(a, b): a unless b is strictly smaller, so the first
// argument's exponent survives a tie.
func pyMin(a, b model.Dec) model.Dec {
	if b.Less(a) {
		return b
	}
	return a
}

// decRepr renders Python's repr(Decimal).
func decRepr(x model.Dec) string { return "Decimal('" + x.String() + "')" }
