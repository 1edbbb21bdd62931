package model

import (
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
)

// ErrInvalidBinarySize is wrapped by every BinarySize parse or format error
// (each is a *BinarySizeError).
var ErrInvalidBinarySize = errors.New("invalid binary size")

// BinarySizeError is a failure of Backend.AI's BinarySize parser or
// formatter. Kind is the class name of the Python exception Backend.AI
// raises for the same input: ValueError for almost everything, but
// OverflowError for an infinite product ("infk"), InvalidOperation for a
// signalling NaN ("snank"), Overflow for a product beyond the decimal
// context's Emax, and IndexError when formatting 1024^9 bytes or more.
type BinarySizeError struct {
	Kind  string
	Input string
	Msg   string
}

// Error says what is wrong in plain words; Kind and Msg keep Python's
// class and message for parity checks, and never reach an operator.
func (e *BinarySizeError) Error() string {
	return fmt.Sprintf("%v %q: %s", ErrInvalidBinarySize, truncForMsg(e.Input), e.Reason())
}

// Reason is the failure in fgtop's words, without Python's exception text.
func (e *BinarySizeError) Reason() string {
	switch {
	case e.Kind == "OverflowError" && strings.Contains(e.Msg, "Infinity"), e.Msg == "infinite values are not allowed":
		return "infinite sizes are not allowed"
	case e.Kind == "Overflow", e.Kind == "OverflowError":
		return "too large"
	case e.Kind == "InvalidOperation", strings.Contains(e.Msg, "NaN"):
		return "not a number"
	case e.Kind == "IndexError":
		return "1024^9 bytes or more cannot be written with a unit"
	case strings.HasPrefix(e.Msg, "('Unconvertible value'"):
		return "want a whole number of bytes, or a number with a binary unit k, m, g, t, p or e (1k = 1024 bytes), such as 4g or 512m"
	case e.Msg == "Fractional bytes are not allowed":
		return "a size without a unit must be a whole number of bytes, such as 1073741824 (or give a unit: 1g)"
	case strings.HasPrefix(e.Msg, "Exceeds the limit"):
		return fmt.Sprintf("more than %d digits", pyIntMaxDigits)
	case strings.HasPrefix(e.Msg, "('Unsupported scale unit.'"):
		return "unknown unit; want one of k, m, g, t, p, e, z, y"
	case strings.HasPrefix(e.Msg, "format-string"):
		return "the unit must be one character"
	}
	return e.Msg
}

// Unwrap makes errors.Is(err, ErrInvalidBinarySize) hold.
func (e *BinarySizeError) Unwrap() error { return ErrInvalidBinarySize }

// binaryUnits are BinarySize's scale letters, in the order of its
// "suffices" tuple (index 1 = k, 2 = m, ...): always binary, k = 2^10.
const binaryUnits = "kmgtpezy"

// sizeEndings are stripped (first match wins) before the scale letter.
var sizeEndings = [...]string{"ibytes", "ibyte", "ib", "bytes", "byte", "b"}

// pyIntMaxDigits is CPython's default int_max_str_digits: int() of a
// longer digit string raises ValueError (CPython 3.11+).
const pyIntMaxDigits = 4300

// pyEmax is the Emax of Python's default decimal context.
const pyEmax = 999999

// ParseBinarySize parses a size the way Backend.AI's BinarySize.from_str
// does: "inf"/"infinite"/"infinity" (any case, not stripped) give Infinity;
// otherwise the string is stripped of Python whitespace and underscores;
// an integer string (any Unicode decimal digits, at most 4300 of them, as
// Python's int() accepts) passes through, and so does an integer with a
// fraction of zeros only ("536870912.000000"); otherwise it is lower-cased,
// one of ibytes|ibyte|ib|bytes|byte|b is stripped, the last character is
// the scale (" " = 1, k, m, g, t, p, e, z, y = 2^10·n: "2GB" is 2 GiB) and
// the rest is a Python Decimal. The product is rounded to 28 digits, as
// Python's decimal context does, then truncated to an integer. The result
// is an integral Dec with exponent 0 (or Infinity). Errors are
// *BinarySizeError.
func ParseBinarySize(s string) (Dec, error) {
	return parseBinarySize(s, true, nil)
}

// ParseBinarySize is the package-level ParseBinarySize, taking storage
// from a.
func (a *DecArena) ParseBinarySize(s string) (Dec, error) {
	return parseBinarySize(s, true, a)
}

// ParseFiniteBinarySize is BinarySize.finite_from_str: infinity is a
// ValueError.
func ParseFiniteBinarySize(s string) (Dec, error) {
	return parseBinarySize(s, false, nil)
}

func parseBinarySize(orig string, allowInf bool, a *DecArena) (Dec, error) {
	fail := func(kind, msg string) (Dec, error) {
		return Dec{}, &BinarySizeError{Kind: kind, Input: orig, Msg: msg}
	}
	if isInfinityWord(orig) {
		if !allowInf {
			return fail("ValueError", "infinite values are not allowed")
		}
		return Dec{&apd.Decimal{Form: apd.Infinite}}, nil
	}
	if d, ok := parseSimpleSize(orig, a); ok {
		return d, nil
	}
	expr := TrimPySpace(orig)
	if strings.IndexByte(expr, '_') >= 0 {
		expr = strings.ReplaceAll(expr, "_", "")
	}
	if d, ok := pyIntLiteral(expr); ok {
		return d, nil
	}
	if d, ok := zeroFractionLiteral(expr); ok {
		return d, nil
	}
	expr = pyLowerForSize(expr)
	var unit rune
	var num string
	ending, matched := "", false
	for _, e := range sizeEndings {
		ending = e
		if strings.HasSuffix(expr, e) {
			stem := expr[:len(expr)-len(e)]
			if stem == "" {
				return fail("ValueError", unconvertible(orig, e))
			}
			r, n := utf8.DecodeLastRuneInString(stem)
			unit, num, matched = r, stem[:len(stem)-n], true
			break
		}
	}
	if !matched {
		if expr == "" {
			return fail("ValueError", unconvertible(orig, ending))
		}
		r, n := utf8.DecodeLastRuneInString(expr)
		if isPyNumeric(r) {
			return fail("ValueError", "Fractional bytes are not allowed")
		}
		unit, num = r, expr[:len(expr)-n]
	}
	dec, err := ParseDec(num)
	if err != nil {
		return fail("ValueError", unconvertible(orig, ending))
	}
	shift, ok := unitShift(unit)
	if !ok {
		return fail("ValueError", fmt.Sprintf("('Unconvertible value', %s)", pyRepr(orig)))
	}
	d, kind, msg := scaleToInt(dec, shift)
	if kind != "" {
		return fail(kind, msg)
	}
	return d, nil
}

func unconvertible(orig, ending string) string {
	return fmt.Sprintf("('Unconvertible value', %s, %s)", pyRepr(orig), pyRepr(ending))
}

// pyRepr approximates Python's repr() of a str, for messages only.
func pyRepr(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(truncForMsg(s), `\`, `\\`), "'", `\'`) + "'"
}

// isInfinityWord reports whether s.lower() is inf, infinite or infinity.
// Only ASCII spellings qualify: the only non-ASCII letter that Python
// lower-cases into ASCII is the Kelvin sign (to "k").
func isInfinityWord(s string) bool {
	switch len(s) {
	case 3, 8:
	default:
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinite") || strings.EqualFold(s, "infinity")
}

// parseSimpleSize handles the forms the agent itself writes ("4g", "1.5g",
// "117.74m", "1073741824") with integer arithmetic only. ok is false for
// anything else, including products that need decimal rounding.
func parseSimpleSize(s string, a *DecArena) (Dec, bool) {
	n := len(s)
	if n == 0 || n > 20 {
		return Dec{}, false
	}
	shift := uint(0)
	body := s
	if c := s[n-1]; c < '0' || c > '9' {
		i := strings.IndexByte(binaryUnits, c|0x20)
		if i < 0 {
			return Dec{}, false
		}
		shift = uint(i+1) * 10
		body = s[:n-1]
	}
	var coeff uint64
	digits, point := 0, -1
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= '0' && c <= '9':
			coeff = coeff*10 + uint64(c-'0')
			digits++
		case c == '.' && point < 0 && shift > 0:
			point = i
		default:
			return Dec{}, false
		}
	}
	if digits == 0 || digits > 19 || shift >= 64 || coeff>>(64-shift) != 0 && shift > 0 {
		return Dec{}, false
	}
	frac := 0
	if point >= 0 {
		frac = len(body) - point - 1
	}
	v := coeff << shift
	if frac > 0 {
		v /= pow10u64[frac]
	}
	if v < uint64(len(smallInts)) {
		return Dec{&smallInts[v]}, true
	}
	d := a.alloc()
	d.Coeff.SetUint64(v)
	return Dec{d}, true
}

var pow10u64 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// pyIntLiteral is Python's int(s) for a string without underscores:
// optional whitespace, an optional sign and 1..4300 Unicode decimal digits.
// Longer digit strings fail, as CPython's int_max_str_digits makes them.
func pyIntLiteral(s string) (Dec, bool) {
	// int() strips whitespace itself; unlike str.strip() it keeps
	// \x1c-\x1f (ASCII, but not C isspace).
	body := strings.TrimFunc(s, func(r rune) bool { return isPySpace(r) && (r < 0x1c || r > 0x1f) })
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	if body == "" {
		return Dec{}, false
	}
	ascii := true
	for i := 0; i < len(body); i++ {
		if c := body[i]; c < '0' || c > '9' {
			ascii = false
			break
		}
	}
	if !ascii {
		var b strings.Builder
		for _, r := range body {
			d := unicodeDecimal(r)
			if d < 0 {
				return Dec{}, false
			}
			b.WriteByte(byte('0' + d))
		}
		body = b.String()
	}
	if len(body) > pyIntMaxDigits {
		return Dec{}, false
	}
	return intFromDigits(body, neg), true
}

// zeroFractionLiteral accepts [+-]digits.zeros ("536870912.000000", also
// "1."), which Backend.AI's BinarySize passes through as an integer.
func zeroFractionLiteral(s string) (Dec, bool) {
	ip, fp, ok := strings.Cut(s, ".")
	if !ok {
		return Dec{}, false
	}
	body := ip
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	if body == "" || !allDigits(body) || strings.Trim(fp, "0") != "" || len(body) > pyIntMaxDigits {
		return Dec{}, false
	}
	return intFromDigits(body, neg), true
}

// intFromDigits returns the integer of ASCII digits (exponent 0; never -0).
func intFromDigits(digits string, neg bool) Dec {
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return Zero
	}
	if len(digits) <= 19 {
		v, _ := strconv.ParseUint(digits, 10, 64)
		if !neg {
			return DecFromUint64(v)
		}
		d := &apd.Decimal{Negative: true}
		d.Coeff.SetUint64(v)
		return Dec{d}
	}
	d := &apd.Decimal{Negative: neg}
	d.Coeff.SetString(digits, 10)
	return Dec{d}
}

// pyLowerForSize is str.lower() as far as BinarySize can tell the
// difference: "İ" (U+0130) becomes "i̇" (two code points) as in Python,
// every other rune its simple lower case.
func pyLowerForSize(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			var b strings.Builder
			for _, r := range s {
				if r == 0x130 {
					b.WriteString("i\u0307")
					continue
				}
				b.WriteRune(unicode.ToLower(r))
			}
			return b.String()
		}
	}
	return strings.ToLower(s)
}

// isPyNumeric approximates str.isnumeric() for one character. Which way it
// goes only changes the ValueError message, never the outcome.
func isPyNumeric(r rune) bool { return unicode.IsNumber(r) }

// unitShift maps a scale character to its power of two.
func unitShift(r rune) (uint, bool) {
	if r == ' ' {
		return 0, true
	}
	if r < utf8.RuneSelf {
		if i := strings.IndexByte(binaryUnits, byte(r)); i >= 0 {
			return uint(i+1) * 10, true
		}
	}
	return 0, false
}

// scaleToInt is int(dec * 2^shift) under Python's default decimal context:
// the product is rounded to 28 significant digits (half-even), an adjusted
// exponent above Emax raises Overflow, then int() truncates toward zero.
// kind is the Python exception class on failure.
func scaleToInt(dec Dec, shift uint) (Dec, string, string) {
	d := dec.ptr()
	switch d.Form {
	case apd.NaNSignaling:
		return Dec{}, "InvalidOperation", "[<class 'decimal.InvalidOperation'>]"
	case apd.NaN:
		return Dec{}, "ValueError", "cannot convert NaN to integer"
	case apd.Infinite:
		return Dec{}, "OverflowError", "cannot convert Infinity to integer"
	}
	var c big.Int
	c.Lsh(d.Coeff.MathBigInt(), shift)
	exp := int64(d.Exponent)
	if c.Sign() == 0 {
		return Zero, "", ""
	}
	nd := numDigits(&c)
	if nd > int64(PyContext.Precision) {
		drop := nd - int64(PyContext.Precision)
		var p, r big.Int
		p.Exp(big.NewInt(10), big.NewInt(drop), nil)
		c.QuoRem(&c, &p, &r)
		r.Lsh(&r, 1)
		if cmp := r.Cmp(&p); cmp > 0 || cmp == 0 && c.Bit(0) == 1 {
			c.Add(&c, big.NewInt(1))
			if numDigits(&c) > int64(PyContext.Precision) {
				c.Quo(&c, big.NewInt(10))
				drop++
			}
		}
		exp += drop
	}
	if exp+numDigits(&c)-1 > pyEmax {
		return Dec{}, "Overflow", "[<class 'decimal.Overflow'>]"
	}
	if exp >= 0 {
		if exp > 0 {
			var p big.Int
			p.Exp(big.NewInt(10), big.NewInt(exp), nil)
			c.Mul(&c, &p)
		}
	} else {
		if -exp > numDigits(&c) {
			return Zero, "", ""
		}
		var p big.Int
		p.Exp(big.NewInt(10), big.NewInt(-exp), nil)
		c.Quo(&c, &p)
	}
	if d.Negative {
		c.Neg(&c)
	}
	return DecFromBigInt(&c), "", ""
}

// numDigits is the number of decimal digits of |c| (1 for 0).
func numDigits(c *big.Int) int64 {
	if c.IsUint64() {
		v := c.Uint64()
		n := int64(1)
		for v >= 10 {
			v /= 10
			n++
		}
		return n
	}
	var d apd.Decimal
	// apd coefficients are never negative.
	d.Coeff.SetMathBigInt(new(big.Int).Abs(c))
	return d.NumDigits()
}

// truncToInt is Python's int(Decimal): toward zero, never -0. kind is the
// Python exception class for NaN and infinities.
func truncToInt(x Dec) (*big.Int, string, string) {
	d := x.ptr()
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return nil, "ValueError", "cannot convert NaN to integer"
	case apd.Infinite:
		return nil, "OverflowError", "cannot convert Infinity to integer"
	}
	c := new(big.Int).Set(d.Coeff.MathBigInt())
	switch {
	case d.Exponent > 0:
		var p big.Int
		p.Exp(big.NewInt(10), big.NewInt(int64(d.Exponent)), nil)
		c.Mul(c, &p)
	case d.Exponent < 0:
		if int64(-d.Exponent) > numDigits(c) {
			return new(big.Int), "", ""
		}
		var p big.Int
		p.Exp(big.NewInt(10), big.NewInt(int64(-d.Exponent)), nil)
		c.Quo(c, &p)
	}
	if d.Negative {
		c.Neg(c)
	}
	return c, "", ""
}

// FormatBinarySizeSpec is Python's format(BinarySize(bytes), spec), the way
// Backend.AI writes sizes: "s" auto-scales to the largest unit the value
// reaches (plain digits below 1 KiB, "4g", "1.5g", "117.74m"; at most two
// decimals after normalising, lossy: 4294967295 prints as "4g"); a unit
// letter ("m", "g", ... or " " for bytes) forces that unit ("1536m",
// "1.5m", "0m" for 123 bytes). BinarySize(x) first truncates x to an
// integer. Errors are *BinarySizeError with Python's exception class:
// ValueError for NaN or a bad spec, OverflowError for infinities,
// IndexError for 1024^9 bytes or more with "s", InvalidOperation when the
// scaled value needs more than 28 digits.
func FormatBinarySizeSpec(bytes Dec, spec string) (string, error) {
	fail := func(kind, msg string) (string, error) {
		return "", &BinarySizeError{Kind: kind, Input: shortString(bytes), Msg: msg}
	}
	if utf8.RuneCountInString(spec) != 1 {
		return fail("ValueError", "format-string for BinarySize can be only one character.")
	}
	if bytes.IsFinite() {
		if v, ok := smallNonNegInt(bytes); ok && spec == "s" {
			return formatSmallAuto(v)
		}
	}
	n, kind, msg := truncToInt(bytes)
	if kind != "" {
		return fail(kind, msg)
	}
	var unit string
	var shift uint
	if spec == "s" {
		if n.Cmp(big.NewInt(1024)) < 0 {
			if numDigits(n) > pyIntMaxDigits {
				return fail("ValueError", "Exceeds the limit (4300 digits) for integer string conversion")
			}
			return n.String(), nil
		}
		idx := (n.BitLen() - 1) / 10
		if idx >= 9 {
			return fail("IndexError", "tuple index out of range")
		}
		unit, shift = binaryUnits[idx-1:idx], uint(idx)*10
	} else {
		u := pyLowerForSize(spec)
		s, ok := 0, false
		if r, _ := utf8.DecodeRuneInString(u); len(u) == utf8.RuneLen(r) {
			var sh uint
			sh, ok = unitShift(r)
			s = int(sh)
		}
		if !ok {
			return fail("ValueError", fmt.Sprintf("('Unsupported scale unit.', %s)", pyRepr(u)))
		}
		unit, shift = u, uint(s)
	}
	v, err := quantizeScaled(n, shift)
	if err != nil {
		return fail("InvalidOperation", "[<class 'decimal.InvalidOperation'>]")
	}
	return TrimPySpace(v + unit), nil
}

// shortString is x.String() for messages, without printing a huge
// integer in full.
func shortString(x Dec) string {
	d := x.ptr()
	if d.Form == apd.Finite && d.Coeff.BitLen() > 256 {
		return fmt.Sprintf("<%d-digit number>", d.NumDigits())
	}
	return x.String()
}

// smallNonNegInt returns x as a uint64 when it is a non-negative integer
// below 2^63 with exponent 0 (what every parsed byte count is).
func smallNonNegInt(x Dec) (uint64, bool) {
	d := x.ptr()
	if d.Negative || d.Exponent != 0 || !d.Coeff.IsUint64() {
		return 0, false
	}
	v := d.Coeff.Uint64()
	return v, v < 1<<63
}

// formatSmallAuto is the "s" format of v < 2^63 without big arithmetic.
// The quotient x = v / 2^shift (shift = 10·idx ≤ 60) has at most 4 integer
// digits; Python rounds it to 28 significant digits before quantizing it
// to hundredths, and that first rounding never changes the second: it
// moves x by at most half a unit in the 24th fractional digit, while x
// differs from a half-hundredth (a tie of the second rounding) or a whole
// hundredth, unless it is one, by at least 1/2^shift ≥ 2^-60 > 10^-19
// (x·100 is a multiple of 1/2^shift). So the exact x rounded half-even to
// hundredths is Python's answer, for every unit (FuzzFormatBinarySize
// holds it to the decimal path, quantizeScaled).
func formatSmallAuto(v uint64) (string, error) {
	if v < 1024 {
		return strconv.FormatUint(v, 10), nil
	}
	idx := (bits.Len64(v) - 1) / 10
	shift := uint(idx) * 10
	whole := v >> shift
	rem := v & (1<<shift - 1)
	unit := binaryUnits[idx-1 : idx]
	if rem == 0 {
		return strconv.FormatUint(whole, 10) + unit, nil
	}
	// rem/2^shift rounded half-even to hundredths: compare rem·100 against
	// multiples of 2^shift.
	hi, lo := bits.Mul64(rem, 100)
	q, r := bits.Div64(hi, lo, 1<<shift)
	half := uint64(1) << (shift - 1)
	if r > half || r == half && q&1 == 1 {
		q++
	}
	if q == 100 {
		return strconv.FormatUint(whole+1, 10) + unit, nil
	}
	s := strconv.FormatUint(whole, 10)
	switch {
	case q == 0:
		return s + unit, nil
	case q%10 == 0:
		return s + "." + strconv.FormatUint(q/10, 10) + unit, nil
	case q < 10:
		return s + ".0" + strconv.FormatUint(q, 10) + unit, nil
	}
	return s + "." + strconv.FormatUint(q, 10) + unit, nil
}

// quantizeScaled is BinarySize._quantize(n, 2^shift) printed with "{:f}":
// the quotient in the 28-digit context; an integral quotient is quantized
// to units, any other to hundredths and normalised.
func quantizeScaled(n *big.Int, shift uint) (string, error) {
	// A quotient of 10^28 or more cannot be quantized to units in a
	// 28-digit context (2^94 > 10^28); skip the long division.
	if n.BitLen()-int(shift) > 94 {
		return "", errors.New("quotient exceeds the context precision")
	}
	var num, den, q apd.Decimal
	num.Coeff.SetMathBigInt(new(big.Int).Abs(n))
	num.Negative = n.Sign() < 0
	var p big.Int
	p.Lsh(big.NewInt(1), shift)
	den.Coeff.SetMathBigInt(&p)
	if _, err := PyContext.Quo(&q, &num, &den); err != nil {
		return "", err
	}
	var ri apd.Decimal
	if _, err := PyContext.RoundToIntegralValue(&ri, &q); err != nil {
		return "", err
	}
	var v apd.Decimal
	if q.Cmp(&ri) == 0 {
		if _, err := PyContext.Quantize(&v, &q, 0); err != nil {
			return "", err
		}
	} else {
		var t apd.Decimal
		if _, err := PyContext.Quantize(&t, &q, -2); err != nil {
			return "", err
		}
		if _, _, err := PyContext.Reduce(&v, &t); err != nil {
			return "", err
		}
	}
	return plainString(Dec{&v}), nil
}

// FormatBinarySize is FormatBinarySizeSpec(bytes, "s") for display: where
// Python would raise it returns the value itself (Infinity, NaN, or the
// plain integer).
func FormatBinarySize(bytes Dec) string {
	s, err := FormatBinarySizeSpec(bytes, "s")
	if err != nil {
		return binarySizeFallback(bytes)
	}
	return s
}

// FormatBinarySizeExact is FormatBinarySize where the size reads back as
// the very bytes, else the size and the bytes ("8g (8589934591 bytes)"):
// for words where a byte decides (a refusal by 1 byte read "8g free, 8g
// requested", §1.3's lossy text).
func FormatBinarySizeExact(bytes Dec) string {
	s := FormatBinarySize(bytes)
	if back, err := ParseBinarySize(s); err == nil && back.Equal(bytes) {
		return s
	}
	if !bytes.IsFinite() {
		return s
	}
	return s + " (" + bytes.String() + " bytes)"
}

// FormatBinarySizeUnit forces one unit ("m", "g", ...), like format spec
// "m": 1.5 MiB prints as "1.5m", 123 bytes as "0m". Where Python would
// raise it returns the value itself.
func FormatBinarySizeUnit(bytes Dec, unit byte) string {
	s, err := FormatBinarySizeSpec(bytes, string(rune(unit)))
	if err != nil {
		return binarySizeFallback(bytes)
	}
	return s
}

func binarySizeFallback(x Dec) string {
	if n, kind, _ := truncToInt(x); kind == "" {
		return n.String()
	}
	return x.String()
}

// plainString prints a finite decimal without exponent (Python's "{:f}").
func plainString(x Dec) string {
	return x.ptr().Text('f')
}
