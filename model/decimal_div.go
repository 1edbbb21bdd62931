package model

import "github.com/cockroachdb/apd/v3"

// pyQuo divides like Python's Decimal `/`: an exact quotient takes the ideal
// exponent exp(x)-exp(y) (4/2 is 2, 1.20/2 is 0.60) rather than apd's full
// precision; an inexact one keeps all 28 digits.
func pyQuo(x, y Dec) (Dec, error) {
	var d apd.Decimal
	cond, err := PyContext.Quo(&d, x.ptr(), y.ptr())
	if err != nil {
		return Dec{}, err
	}
	if d.Form != apd.Finite || cond.Inexact() || cond.Rounded() {
		return Dec{&d}, nil
	}
	ideal := int64(x.ptr().Exponent) - int64(y.ptr().Exponent)
	if d.Coeff.Sign() == 0 {
		if ideal >= int64(PyContext.MinExponent) && ideal <= int64(PyContext.MaxExponent) {
			d.Exponent = int32(ideal)
		}
		return Dec{&d}, nil
	}
	ten := apd.NewBigInt(10)
	var q, r apd.BigInt
	for int64(d.Exponent) < ideal {
		q.QuoRem(&d.Coeff, ten, &r)
		if r.Sign() != 0 {
			break
		}
		d.Coeff.Set(&q)
		d.Exponent++
	}
	return Dec{&d}, nil
}
