package replay

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
)

// fixed is an amount a run sums (what an agent's sessions hold and ask):
// the very Dec that Dec's Add and Sub would have given, kept as a machine
// integer coefficient and its exponent while it fits. Python's context
// adds exactly below 28 digits, with the smaller of the two exponents, so
// an int64 coefficient aligned to that exponent is the same number in
// the same form (Dec.Identical: TestFixedIsDecArithmetic). What does not
// fit (a coefficient past int64, an alignment that overflows, a NaN or a
// negative zero) takes the decimal path, Dec's own arithmetic, from then
// on. A week's run sums millions of amounts: each Dec sum allocates.
type fixed struct {
	c int64
	e int32
	// d is the amount on the decimal path (dec).
	d   model.Dec
	dec bool
}

// fixedExp bounds the exponents kept as machine integers: a sum of
// coefficients below 2^63 at exponents within ±1,000 stays far inside
// the context's ±999,999, where Dec adds exactly. Past it Dec's result
// is no longer the exact sum (a subnormal, an overflow: NaN), so an amount
// a damaged record gives such an exponent takes the decimal path, and a
// zero's alignment is a short loop.
const fixedExp = 1000

// fixedOf is v as a fixed.
func fixedOf(v model.Dec) fixed {
	if v == (model.Dec{}) {
		return fixed{}
	}
	a := v.Apd()
	if a.Form != apd.Finite || !a.Coeff.IsInt64() || a.Negative && a.Coeff.Sign() == 0 ||
		a.Exponent < -fixedExp || a.Exponent > fixedExp {
		return fixed{d: v, dec: true}
	}
	c := a.Coeff.Int64()
	if a.Negative {
		c = -c
	}
	return fixed{c: c, e: a.Exponent}
}

// fixedOfMemo is fixedOf(v), kept in fx (nil: not kept) by v: a Dec is
// never changed once made, so the one Dec gives the one fixed.
func fixedOfMemo(v model.Dec, fx map[model.Dec]fixed) fixed {
	if fx == nil {
		return fixedOf(v)
	}
	f, ok := fx[v]
	if !ok {
		f = fixedOf(v)
		fx[v] = f
	}
	return f
}

// Dec is f as a decimal.
func (f fixed) Dec() model.Dec {
	if f.dec {
		return f.d
	}
	if f.c == 0 && f.e == 0 {
		return model.Zero
	}
	return model.NewDec(f.c, f.e)
}

// scale is c × 10^k, false where it overflows int64.
func scale(c int64, k int32) (int64, bool) {
	for ; k > 0; k-- {
		if c > math.MaxInt64/10 || c < math.MinInt64/10 {
			return 0, false
		}
		c *= 10
	}
	return c, true
}

// aligned are x's and y's coefficients at the smaller of their exponents.
func aligned(x, y fixed) (xc, yc int64, e int32, ok bool) {
	e = min(x.e, y.e)
	if xc, ok = scale(x.c, x.e-e); !ok {
		return
	}
	yc, ok = scale(y.c, y.e-e)
	return
}

// add is x + y (x - y with sub), as Dec's Add (Sub) gives it.
func (x fixed) add(y fixed, sub bool) fixed {
	if !x.dec && !y.dec {
		if xc, yc, e, ok := aligned(x, y); ok && (!sub || yc != math.MinInt64) {
			if sub {
				yc = -yc
			}
			s := xc + yc
			// No overflow: the sum's sign is one of the operands'.
			if (xc >= 0) != (yc >= 0) || (s >= 0) == (xc >= 0) {
				return fixed{c: s, e: e}
			}
		}
	}
	if sub {
		return fixed{d: x.Dec().Sub(y.Dec()), dec: true}
	}
	return fixed{d: x.Dec().Add(y.Dec()), dec: true}
}

// cmp compares x and y by value.
func (x fixed) cmp(y fixed) int {
	if !x.dec && !y.dec {
		if xc, yc, _, ok := aligned(x, y); ok {
			switch {
			case xc < yc:
				return -1
			case xc > yc:
				return 1
			}
			return 0
		}
	}
	return x.Dec().Cmp(y.Dec())
}

// sign is x's sign.
func (x fixed) sign() int {
	if x.dec {
		return x.d.Sign()
	}
	switch {
	case x.c < 0:
		return -1
	case x.c > 0:
		return 1
	}
	return 0
}

// useSum is a slot's Σ used × ns as slotAcc summed it in Decs: the
// same Dec (value and form) while every term and sum stays below 10^26
// (exact in Python's 28 digits, as the decimal sum was), kept as a
// 128-bit coefficient at the decimal sum's exponent; from the first term
// past that (a terabyte held for days), the decimal sum itself.
type useSum struct {
	hi, lo uint64
	e      int32
	d      model.Dec
	dec    bool
}

// useCap is 10^26: below it a sum of Decs is exact.
var useCapHi, useCapLo = bits.Mul64(1e13, 1e13)

func below(hi, lo, capHi, capLo uint64) bool { return hi < capHi || hi == capHi && lo < capLo }

// times10 is (hi, lo) × 10^k, false where it reaches 10^26.
func times10(hi, lo uint64, k int32) (uint64, uint64, bool) {
	capHi, capLo := bits.Mul64(1e12, 1e13) // 10^25: ×10 stays below 10^26
	for ; k > 0; k-- {
		if !below(hi, lo, capHi, capLo) {
			return 0, 0, false
		}
		h, l := bits.Mul64(lo, 10)
		hi, lo = hi*10+h, l
	}
	return hi, lo, true
}

// add adds used × dt (dt > 0), as settle's Dec sum did.
func (u *useSum) add(used fixed, dt int64) {
	if used.sign() == 0 {
		return
	}
	if !u.dec && !used.dec && used.c > 0 {
		// Two int64s' product fits 128 bits; the sum is bounded below.
		ph, pl := bits.Mul64(uint64(used.c), uint64(dt))
		hi, lo, e := u.hi, u.lo, u.e
		ok := true
		if used.e < e {
			hi, lo, ok = times10(hi, lo, e-used.e)
			e = used.e
		} else if used.e > e {
			ph, pl, ok = times10(ph, pl, used.e-e)
		}
		if ok {
			var carry uint64
			lo, carry = bits.Add64(lo, pl, 0)
			hi += ph + carry
			if below(hi, lo, useCapHi, useCapLo) {
				u.hi, u.lo, u.e = hi, lo, e
				return
			}
		}
	}
	if !u.dec {
		u.d, u.dec = u.exact(), true
	}
	u.d = u.d.Add(used.Dec().Mul(model.DecFromInt64(dt)))
}

// addSum adds o's terms to u, as adding them one by one after u's would:
// false (u unchanged) where that is not certain, either sum or theirs
// being past machine integers (the decimal sum rounds in the order it is
// made). A sum starts at exponent 0 and keeps the least of its terms'.
func (u *useSum) addSum(o useSum) bool {
	if u.dec || o.dec {
		return false
	}
	hi, lo, e := u.hi, u.lo, u.e
	oh, ol := o.hi, o.lo
	ok := true
	if o.e < e {
		hi, lo, ok = times10(hi, lo, e-o.e)
		e = o.e
	} else if o.e > e {
		oh, ol, ok = times10(oh, ol, o.e-e)
	}
	if !ok {
		return false
	}
	var carry uint64
	lo, carry = bits.Add64(lo, ol, 0)
	hi += oh + carry
	if !below(hi, lo, useCapHi, useCapLo) {
		return false
	}
	u.hi, u.lo, u.e = hi, lo, e
	return true
}

// exact is the 128-bit sum as the Dec it stands for.
func (u *useSum) exact() model.Dec {
	if u.hi == 0 && u.lo == 0 && u.e == 0 {
		return model.Zero
	}
	if u.hi == 0 && u.lo <= math.MaxInt64 {
		return model.NewDec(int64(u.lo), u.e)
	}
	v := new(big.Int).Lsh(new(big.Int).SetUint64(u.hi), 64)
	v.Or(v, new(big.Int).SetUint64(u.lo))
	return model.MustDec(v.String() + "E" + strconv.Itoa(int(u.e)))
}

// Dec is the sum.
func (u *useSum) Dec() model.Dec {
	if u.dec {
		return u.d
	}
	return u.exact()
}
