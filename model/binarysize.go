package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// ErrInvalidBinarySize is wrapped by every BinarySize parse error (Python's
// ValueError from BinarySize.from_str).
var ErrInvalidBinarySize = errors.New("invalid binary size")

// binaryUnits are Backend.AI's BinarySize suffixes: always binary (k = 2^10).
var binaryUnits = []struct {
	suffix byte
	shift  uint
}{{'k', 10}, {'m', 20}, {'g', 30}, {'t', 40}, {'p', 50}, {'e', 60}, {'z', 70}, {'y', 80}}

var sizeEndings = []string{"ibytes", "ibyte", "ib", "bytes", "byte", "b"}

// ParseBinarySize parses a size the way Backend.AI's BinarySize.from_str
// does: underscores removed; an integer string (also "536870912.000000")
// passes through; otherwise lower-cased, one of ibytes|ibyte|ib|bytes|byte|b
// stripped, and the last character is a binary unit (k, m, g, ... = 2^10·n;
// "2GB" is 2 GiB) applied to a decimal. "inf"/"infinite"/"infinity" give
// Infinity. The result is an integral Dec (or Infinity).
func ParseBinarySize(s string) (Dec, error) {
	return parseBinarySize(s, true)
}

// ParseFiniteBinarySize is BinarySize.finite_from_str: infinity is an error.
func ParseFiniteBinarySize(s string) (Dec, error) {
	return parseBinarySize(s, false)
}

func parseBinarySize(orig string, allowInf bool) (Dec, error) {
	bad := func() (Dec, error) {
		return Dec{}, fmt.Errorf("%w: %q", ErrInvalidBinarySize, truncForMsg(orig))
	}
	switch strings.ToLower(orig) {
	case "inf", "infinite", "infinity":
		if !allowInf {
			return bad()
		}
		return Dec{&apd.Decimal{Form: apd.Infinite}}, nil
	}
	expr := strings.ReplaceAll(strings.TrimFunc(orig, isPySpace), "_", "")
	if v, ok := pyIntString(expr); ok {
		return v, nil
	}
	expr = strings.ToLower(expr)
	for _, e := range sizeEndings {
		if strings.HasSuffix(expr, e) {
			expr = expr[:len(expr)-len(e)]
			break
		}
	}
	if expr == "" {
		return bad()
	}
	unit := expr[len(expr)-1]
	var shift uint
	found := false
	for _, u := range binaryUnits {
		if u.suffix == unit {
			shift, found = u.shift, true
			break
		}
	}
	if !found {
		return bad()
	}
	num, err := ParseDec(expr[:len(expr)-1])
	if err != nil || !num.IsFinite() {
		return bad()
	}
	var mult apd.Decimal
	mult.Coeff.Lsh(apd.NewBigInt(1), shift)
	var r apd.Decimal
	if _, err := PyContext.Mul(&r, num.ptr(), &mult); err != nil {
		return bad()
	}
	// int(Decimal) truncates toward zero.
	var i apd.Decimal
	c := *PyContext
	c.Rounding = apd.RoundDown
	if _, err := c.Quantize(&i, &r, 0); err != nil {
		return bad()
	}
	return Dec{&i}, nil
}

// pyIntString accepts what Python's int(Decimal(s))-style pass-through does
// for plain integers: an optional sign, digits, and an optional fraction of
// zeros only ("536870912.000000").
func pyIntString(s string) (Dec, bool) {
	d, err := ParseDec(s)
	if err != nil || !d.IsFinite() {
		return Dec{}, false
	}
	t := s
	if t != "" && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	ip, fp, _ := strings.Cut(t, ".")
	if ip == "" || !allDigits(ip) || !allDigits(fp) || strings.Trim(fp, "0") != "" {
		return Dec{}, false
	}
	q, err := d.Quantize(0, apd.RoundDown)
	if err != nil {
		return Dec{}, false
	}
	return q, true
}

// FormatBinarySize formats bytes as BinarySize's format spec "s": auto-scaled
// binary unit with a lowercase suffix and at most two decimals after
// normalising ("4g", "1.5g"), plain digits below 1 KiB. It is lossy:
// 4294967295 prints as "4g".
func FormatBinarySize(bytes Dec) string {
	if !bytes.IsFinite() {
		return bytes.String()
	}
	abs := bytes
	if abs.Sign() < 0 {
		abs = abs.Neg()
	}
	kib := NewDec(1024, 0)
	if abs.Less(kib) {
		i, err := bytes.Quantize(0, apd.RoundDown)
		if err != nil {
			return bytes.String()
		}
		return i.String()
	}
	for idx := len(binaryUnits) - 1; idx >= 0; idx-- {
		u := binaryUnits[idx]
		var mult apd.Decimal
		mult.Coeff.Lsh(apd.NewBigInt(1), u.shift)
		m := DecFromApd(&mult)
		if abs.Cmp(m) < 0 && idx > 0 {
			continue
		}
		v, err := bytes.Quo(m)
		if err != nil {
			return bytes.String()
		}
		v, err = v.Quantize(-2, apd.RoundHalfEven)
		if err != nil {
			return bytes.String()
		}
		return plainString(v.Normalize()) + string(u.suffix)
	}
	return bytes.String()
}

// FormatBinarySizeUnit forces one unit ("m", "g", ...), like format spec "m":
// the value is truncated to an integer of that unit.
func FormatBinarySizeUnit(bytes Dec, unit byte) string {
	for _, u := range binaryUnits {
		if u.suffix == unit {
			var mult apd.Decimal
			mult.Coeff.Lsh(apd.NewBigInt(1), u.shift)
			v, err := bytes.QuoInteger(DecFromApd(&mult))
			if err != nil {
				return bytes.String()
			}
			return v.String() + string(unit)
		}
	}
	return bytes.String()
}

// plainString prints a finite decimal without exponent (Python's "{:f}").
func plainString(x Dec) string {
	d := x.ptr()
	s := d.Text('f')
	return s
}
