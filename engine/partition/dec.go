package partition

import (
	"math/big"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
)

// quo is Python's Decimal x / y: rounded to 28 digits when inexact, and
// when exact, with the "ideal" exponent exp(x) - exp(y) where the
// coefficient allows (Decimal(4) / 2 is 2, not 2.000...). apd's Quo
// always fills the precision, so the exact case is reduced here.
func quo(x, y model.Dec) (model.Dec, error) {
	var d apd.Decimal
	cond, err := model.PyContext.Quo(&d, x.Apd(), y.Apd())
	if err != nil {
		return model.Dec{}, err
	}
	if cond.Inexact() || d.Form != apd.Finite {
		return model.DecFromApd(&d), nil
	}
	ideal := x.Apd().Exponent - y.Apd().Exponent
	ten := big.NewInt(10)
	var q, r big.Int
	coeff := d.Coeff.MathBigInt()
	for d.Exponent < ideal && coeff.Sign() != 0 {
		q.QuoRem(coeff, ten, &r)
		if r.Sign() != 0 {
			break
		}
		coeff.Set(&q)
		d.Exponent++
	}
	if coeff.Sign() == 0 && d.Exponent < ideal {
		d.Exponent = ideal
	}
	d.Coeff.SetMathBigInt(coeff)
	return model.DecFromApd(&d), nil
}
