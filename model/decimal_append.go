package model

import (
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// AppendString appends x as String formats it, without building a string
// for the usual amounts (a coefficient that fits a machine word, printed
// without an exponent): the history recorder writes a dozen amounts per
// change, and a string apiece was a good part of what it cost.
func (x Dec) AppendString(dst []byte) []byte {
	d := x.ptr()
	if d.Form != apd.Finite || !d.Coeff.IsUint64() || d.Exponent > 0 {
		return append(dst, x.String()...)
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], d.Coeff.Uint64(), 10)
	exp := int(d.Exponent)
	if exp+len(digits)-1 < -6 {
		return append(dst, x.String()...)
	}
	if d.Negative {
		dst = append(dst, '-')
	}
	switch point := len(digits) + exp; {
	case exp == 0:
		dst = append(dst, digits...)
	case point > 0:
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		dst = append(dst, digits[point:]...)
	default:
		dst = append(dst, '0', '.')
		for i := 0; i < -point; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	}
	return dst
}
