package model

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
)

// Dec is an exact decimal number with Python's decimal semantics: it keeps its
// exponent, so "0.60" stays "0.60" and 0.1+0.2 is exactly 0.3. A Dec is
// immutable; the zero value is the integer 0 (printed "0").
//
// Arithmetic runs in Python's default decimal context (precision 28,
// ROUND_HALF_EVEN), which is the one Backend.AI's agent uses.
type Dec struct {
	d *apd.Decimal // nil means 0; never mutated once a Dec holds it
}

// PyContext is Python's default decimal context. apd contexts carry no
// mutable state, so one value is safe to share between goroutines.
var PyContext = &apd.Context{
	Precision:   28,
	MaxExponent: 999999,
	MinExponent: -999999,
	Rounding:    apd.RoundHalfEven,
	Traps:       apd.InvalidOperation | apd.DivisionByZero | apd.Overflow,
}

// ErrInvalidDecimal is wrapped by every decimal parse error; it mirrors
// Python's decimal.InvalidOperation (ConversionSyntax).
var ErrInvalidDecimal = errors.New("invalid decimal")

// Common constants.
var (
	Zero = Dec{}
	One  = NewDec(1, 0)
)

// NewDec returns coeff × 10^exp, e.g. NewDec(60, -2) is 0.60.
func NewDec(coeff int64, exp int32) Dec { return Dec{apd.New(coeff, exp)} }

// DecFromApd wraps a copy of x.
func DecFromApd(x *apd.Decimal) Dec {
	var d apd.Decimal
	d.Set(x)
	return Dec{&d}
}

// Apd returns a copy of the value as an apd.Decimal, for packages that need
// operations Dec does not offer.
func (x Dec) Apd() *apd.Decimal {
	var d apd.Decimal
	if x.d != nil {
		d.Set(x.d)
	}
	return &d
}

func (x Dec) ptr() *apd.Decimal {
	if x.d == nil {
		return &apdZero
	}
	return x.d
}

var apdZero apd.Decimal

// ParseDec parses s the way Python's Decimal(str) does: exact (no rounding),
// surrounding Unicode whitespace ignored, underscores ignored, Unicode decimal
// digits accepted, case-insensitive Infinity/Inf/NaN/sNaN.
func ParseDec(s string) (Dec, error) {
	return (*DecArena)(nil).ParseDec(s)
}

// DecArena hands out the storage behind parsed Decs from shared blocks, so
// a parser that reads many values makes one allocation instead of one per
// value. The zero value is ready to use; a nil *DecArena allocates each
// value separately. It is not safe for concurrent use. The Decs it returns
// are as immutable as any other (each keeps its block reachable).
type DecArena struct {
	free   []apd.Decimal
	blocks int
}

func (a *DecArena) alloc() *apd.Decimal {
	if a == nil {
		return new(apd.Decimal)
	}
	if len(a.free) == 0 {
		// A resource file needs five or so; a parser that needs more gets
		// larger blocks.
		n := 8
		if a.blocks > 0 {
			n = 32
		}
		a.blocks++
		a.free = make([]apd.Decimal, n)
	}
	d := &a.free[0]
	a.free = a.free[1:]
	return d
}

// ParseDec is the package-level ParseDec, taking storage from a.
func (a *DecArena) ParseDec(s string) (Dec, error) {
	// Nearly every value in a resource file is a short plain number; those
	// skip the Unicode normalisation and allocate at most one apd.Decimal.
	if d, ok := parseSimpleDec(s, a); ok {
		return d, nil
	}
	ascii, err := pyNumericASCII(s)
	if err != nil {
		return Dec{}, fmt.Errorf("%w: %q", ErrInvalidDecimal, truncForMsg(s))
	}
	d, err := parseASCIIDec(ascii)
	if err != nil {
		return Dec{}, fmt.Errorf("%w: %q", ErrInvalidDecimal, truncForMsg(s))
	}
	return d, nil
}

// smallInts holds the integers 0..255 (exponent 0). Dec values are
// immutable, so parses of "1", "2", ... can share them instead of
// allocating.
var smallInts = func() (t [256]apd.Decimal) {
	for i := range t {
		t[i].Coeff.SetUint64(uint64(i))
	}
	return t
}()

// parseSimpleDec parses [+-]digits[.digits] with at most 19 ASCII digits,
// the form nearly all resource-file values take. ok is false for anything
// else (which the general parser then handles).
func parseSimpleDec(s string, a *DecArena) (Dec, bool) {
	n := len(s)
	if n == 0 || n > 21 {
		return Dec{}, false
	}
	i := 0
	neg := false
	switch s[0] {
	case '-':
		neg, i = true, 1
	case '+':
		i = 1
	}
	var coeff uint64
	digits, point := 0, -1
	for ; i < n; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			coeff = coeff*10 + uint64(c-'0')
			digits++
		case c == '.' && point < 0:
			point = i
		default:
			return Dec{}, false
		}
	}
	if digits == 0 || digits > 19 {
		return Dec{}, false
	}
	exp := 0
	if point >= 0 {
		exp = point + 1 - n
	}
	if exp == 0 && !neg && coeff < uint64(len(smallInts)) {
		return Dec{&smallInts[coeff]}, true
	}
	d := a.alloc()
	d.Negative, d.Exponent = neg, int32(exp)
	d.Coeff.SetUint64(coeff)
	return Dec{d}, true
}

// DecFromInt64 returns v with exponent 0, like Python's Decimal(int).
func DecFromInt64(v int64) Dec {
	if v >= 0 {
		return DecFromUint64(uint64(v))
	}
	d := &apd.Decimal{Negative: true}
	d.Coeff.SetUint64(uint64(-(v + 1)) + 1)
	return Dec{d}
}

// DecFromUint64 returns v with exponent 0, like Python's Decimal(int).
func DecFromUint64(v uint64) Dec {
	if v < uint64(len(smallInts)) {
		return Dec{&smallInts[v]}
	}
	d := &apd.Decimal{}
	d.Coeff.SetUint64(v)
	return Dec{d}
}

// DecFromBigInt returns v with exponent 0, like Python's Decimal(int).
func DecFromBigInt(v *big.Int) Dec {
	if v.IsUint64() {
		return DecFromUint64(v.Uint64())
	}
	d := &apd.Decimal{Negative: v.Sign() < 0}
	var abs big.Int
	abs.Abs(v)
	d.Coeff.SetMathBigInt(&abs)
	return Dec{d}
}

// DecFromFloat64 returns the exact value of f, like Python's
// Decimal(float): 0.1 becomes
// 0.1000000000000000055511151231257827021181583404541015625, an integral
// float has exponent 0 (1e16 prints as 10000000000000000), -0.0 is "-0",
// and NaN/±Inf map to NaN/±Infinity.
func DecFromFloat64(f float64) Dec {
	switch {
	case math.IsNaN(f):
		return Dec{&apd.Decimal{Form: apd.NaN}}
	case math.IsInf(f, 0):
		return Dec{&apd.Decimal{Form: apd.Infinite, Negative: f < 0}}
	}
	neg := math.Signbit(f)
	frac, exp := math.Frexp(math.Abs(f))
	// f = mant × 2^e with an integer mantissa of at most 53 bits.
	mant := uint64(math.Ldexp(frac, 53))
	e := exp - 53
	if mant == 0 {
		return Dec{&apd.Decimal{Negative: neg}}
	}
	for mant&1 == 0 && e < 0 {
		mant >>= 1
		e++
	}
	d := &apd.Decimal{Negative: neg}
	if e >= 0 {
		var c big.Int
		c.SetUint64(mant)
		c.Lsh(&c, uint(e))
		d.Coeff.SetMathBigInt(&c)
		return Dec{d}
	}
	// mant / 2^k == mant × 5^k / 10^k, exactly what Python prints.
	k := -e
	var c, p big.Int
	c.SetUint64(mant)
	p.Exp(big.NewInt(5), big.NewInt(int64(k)), nil)
	c.Mul(&c, &p)
	d.Coeff.SetMathBigInt(&c)
	d.Exponent = int32(-k)
	return Dec{d}
}

// MustDec parses s and panics on error; for constants and tests.
func MustDec(s string) Dec {
	d, err := ParseDec(s)
	if err != nil {
		panic(err)
	}
	return d
}

func truncForMsg(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// pyNumericASCII mirrors CPython's numeric_as_ascii(u, strip_ws=1,
// ignore_underscores=1): surrounding Unicode whitespace is stripped first
// (so "_ 7" keeps its space and fails), then underscores are dropped,
// non-ASCII whitespace becomes a space, Unicode decimal digits become ASCII
// digits, and anything else non-ASCII (and NUL) makes the string invalid.
func pyNumericASCII(s string) (string, error) {
	s = TrimPySpace(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '_':
			continue
		case r == utf8RuneError:
			return "", ErrInvalidDecimal
		case r > 0 && r <= 127:
			b.WriteRune(r)
		case isPySpace(r):
			b.WriteByte(' ')
		default:
			if d := unicodeDecimal(r); d >= 0 {
				b.WriteByte(byte('0' + d))
				continue
			}
			return "", ErrInvalidDecimal
		}
	}
	return b.String(), nil
}

const utf8RuneError = '\uFFFD'

// isPySpace is Python's str.isspace() / Py_UNICODE_ISSPACE.
func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680,
		0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// IsPySpace reports whether r is whitespace for Python's str.strip().
func IsPySpace(r rune) bool { return isPySpace(r) }

// TrimPySpace is Python's str.strip() with no arguments: it removes
// leading and trailing Unicode whitespace (including \x1c-\x1f, NEL, NBSP
// and U+2028, but not U+200B or U+FEFF).
func TrimPySpace(s string) string {
	i, j := 0, len(s)
	for i < j {
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiPySpace[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isPySpace(r) {
			break
		}
		i += n
	}
	for j > i {
		c := s[j-1]
		if c < utf8.RuneSelf {
			if !asciiPySpace[c] {
				break
			}
			j--
			continue
		}
		r, n := utf8.DecodeLastRuneInString(s[i:j])
		if !isPySpace(r) {
			break
		}
		j -= n
	}
	return s[i:j]
}

// asciiPySpace marks the ASCII characters Python's str.isspace() accepts.
var asciiPySpace = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isPySpace(rune(c))
	}
	return t
}()

// unicodeDecimal returns the value of a Unicode decimal digit (category Nd),
// or -1. Contiguous Nd runs start at a zero and are made of whole runs of
// ten, so the value is the distance from the run's start modulo ten.
func unicodeDecimal(r rune) int {
	if !unicode.Is(unicode.Nd, r) {
		return -1
	}
	z := r
	for unicode.Is(unicode.Nd, z-1) {
		z--
	}
	return int(r-z) % 10
}

// parseASCIIDec parses the General Decimal Arithmetic numeric-string syntax
// (what libmpdec accepts), exactly.
func parseASCIIDec(s string) (Dec, error) {
	if s == "" {
		return Dec{}, ErrInvalidDecimal
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	low := strings.ToLower(s)
	switch low {
	case "inf", "infinity":
		return Dec{&apd.Decimal{Form: apd.Infinite, Negative: neg}}, nil
	}
	if strings.HasPrefix(low, "snan") || strings.HasPrefix(low, "nan") {
		form := apd.NaN
		rest := low[3:]
		if low[0] == 's' {
			form, rest = apd.NaNSignaling, low[4:]
		}
		for i := 0; i < len(rest); i++ {
			if rest[i] < '0' || rest[i] > '9' {
				return Dec{}, ErrInvalidDecimal
			}
		}
		d := &apd.Decimal{Form: form, Negative: neg}
		// Python keeps the payload digits (NaN123); leading zeros are dropped.
		if p := strings.TrimLeft(rest, "0"); p != "" {
			if _, ok := d.Coeff.SetString(p, 10); !ok {
				return Dec{}, ErrInvalidDecimal
			}
		}
		return Dec{d}, nil
	}
	mant, expPart, hasExp := strings.Cut(low, "e")
	var exp int64
	if hasExp {
		if expPart == "" {
			return Dec{}, ErrInvalidDecimal
		}
		es := expPart
		if es[0] == '+' || es[0] == '-' {
			es = es[1:]
		}
		if es == "" || !allDigits(es) {
			return Dec{}, ErrInvalidDecimal
		}
		es = strings.TrimLeft(es, "0")
		if len(es) > 18 {
			return Dec{}, ErrInvalidDecimal
		}
		v, err := strconv.ParseInt(es+"0", 10, 64)
		if err != nil {
			return Dec{}, ErrInvalidDecimal
		}
		exp = v / 10
		if expPart[0] == '-' {
			exp = -exp
		}
	}
	intPart, fracPart, _ := strings.Cut(mant, ".")
	if intPart == "" && fracPart == "" {
		return Dec{}, ErrInvalidDecimal
	}
	if !allDigits(intPart) || !allDigits(fracPart) {
		return Dec{}, ErrInvalidDecimal
	}
	exp -= int64(len(fracPart))
	if exp > 1<<31-1 || exp < -(1<<31) {
		return Dec{}, ErrInvalidDecimal
	}
	d := &apd.Decimal{Negative: neg, Exponent: int32(exp)}
	digits := strings.TrimLeft(intPart+fracPart, "0")
	if digits != "" {
		if _, ok := d.Coeff.SetString(digits, 10); !ok {
			return Dec{}, ErrInvalidDecimal
		}
	}
	return Dec{d}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats x exactly as Python's str(Decimal) does (the GDA
// to-scientific-string conversion).
func (x Dec) String() string {
	d := x.ptr()
	var b strings.Builder
	if d.Negative {
		b.WriteByte('-')
	}
	switch d.Form {
	case apd.Infinite:
		b.WriteString("Infinity")
		return b.String()
	case apd.NaN, apd.NaNSignaling:
		if d.Form == apd.NaNSignaling {
			b.WriteByte('s')
		}
		b.WriteString("NaN")
		if !(d.Coeff.Sign() == 0) {
			b.WriteString(d.Coeff.String())
		}
		return b.String()
	}
	var digits string
	if d.Coeff.IsUint64() {
		// The usual amounts fit a machine word: big.Int's formatting was
		// most of what recording a change cost.
		digits = strconv.FormatUint(d.Coeff.Uint64(), 10)
	} else {
		digits = d.Coeff.String()
	}
	exp := int(d.Exponent)
	adj := exp + len(digits) - 1
	switch {
	case exp <= 0 && adj >= -6:
		if exp == 0 {
			b.WriteString(digits)
			break
		}
		point := len(digits) + exp
		if point > 0 {
			b.WriteString(digits[:point])
			b.WriteByte('.')
			b.WriteString(digits[point:])
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -point))
			b.WriteString(digits)
		}
	default:
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('E')
		if adj >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(adj))
	}
	return b.String()
}

// MarshalJSON writes the decimal as a JSON string in str(Decimal) form.
func (x Dec) MarshalJSON() ([]byte, error) { return strconv.AppendQuote(nil, x.String()), nil }

// UnmarshalJSON accepts a JSON string (or bare number) in decimal syntax.
func (x *Dec) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	d, err := ParseDec(s)
	if err != nil {
		return err
	}
	*x = d
	return nil
}

// IsZero reports whether x is ±0 (of any exponent).
func (x Dec) IsZero() bool { return x.d == nil || (x.d.Form == apd.Finite && (x.d.Coeff.Sign() == 0)) }

// Sign returns -1, 0 or +1 (NaN gives 0).
func (x Dec) Sign() int {
	if x.d == nil || x.IsNaN() {
		return 0
	}
	return x.d.Sign()
}

// IsNaN reports whether x is a quiet or signaling NaN.
func (x Dec) IsNaN() bool {
	return x.d != nil && (x.d.Form == apd.NaN || x.d.Form == apd.NaNSignaling)
}

// IsFinite reports whether x is neither infinite nor NaN.
func (x Dec) IsFinite() bool { return x.d == nil || x.d.Form == apd.Finite }

// Exponent is the decimal exponent (0.60 has exponent -2).
func (x Dec) Exponent() int32 { return x.ptr().Exponent }

// Cmp compares numerically: -1, 0, +1. NaNs compare equal to each other and
// below everything else, so sorting stays total.
func (x Dec) Cmp(y Dec) int {
	xn, yn := x.IsNaN(), y.IsNaN()
	switch {
	case xn && yn:
		return 0
	case xn:
		return -1
	case yn:
		return 1
	}
	return x.ptr().Cmp(y.ptr())
}

// Equal is numeric equality (0.6 equals 0.60). Use Identical for the exact
// Python string form.
func (x Dec) Equal(y Dec) bool { return x.Cmp(y) == 0 }

// Identical reports whether x and y print the same (same value and exponent).
// Finite values are compared without printing them: the console compares
// every device's capacity on every snapshot.
func (x Dec) Identical(y Dec) bool {
	a, b := x.ptr(), y.ptr()
	if a == b {
		return true
	}
	if a.Form == apd.Finite && b.Form == apd.Finite {
		return a.Negative == b.Negative && a.Exponent == b.Exponent && a.Coeff.Cmp(&b.Coeff) == 0
	}
	return x.String() == y.String()
}

// Less reports x < y.
func (x Dec) Less(y Dec) bool { return x.Cmp(y) < 0 }

type binop func(c *apd.Context, d, a, b *apd.Decimal) (apd.Condition, error)

func (x Dec) op(y Dec, f binop) (Dec, error) {
	var d apd.Decimal
	if _, err := f(PyContext, &d, x.ptr(), y.ptr()); err != nil {
		return Dec{}, err
	}
	return Dec{&d}, nil
}

// farApart is an exponent gap past which a sum is computed by edgeAddSub:
// well beyond the 28 digits rounding keeps.
const farApart = 4 * 28

// edgeOp is op for Add, Sub and Mul: where apd refuses exponents Python's
// context allows (decimal_edge.go), the operation is done again moved.
func (x Dec) edgeOp(y Dec, f binop, mul bool) Dec {
	a, b := x.ptr(), y.ptr()
	if !mul && a.Form == apd.Finite && b.Form == apd.Finite {
		// Terms far apart are added as apart as rounding needs: apd would
		// compute 10^gap (10 ms at a gap of 100,000, a hostile file's).
		if gap := int64(a.Exponent) - int64(b.Exponent); gap > farApart || gap < -farApart {
			if r, err := edgeAddSub(a, b, f); err == nil {
				return r
			}
			return Dec{&apd.Decimal{Form: apd.NaN}}
		}
	}
	r, err := x.op(y, f)
	if err == nil {
		return r
	}
	if a.Form == apd.Finite && b.Form == apd.Finite {
		if mul {
			r, err = edgeMul(a, b)
		} else {
			r, err = edgeAddSub(a, b, f)
		}
		if err == nil {
			return r
		}
	}
	// NaN/Infinity operands, or Python's Overflow: NaN rather than crash
	// an operator's console.
	return Dec{&apd.Decimal{Form: apd.NaN}}
}

// Add returns x+y in Python's default context.
func (x Dec) Add(y Dec) Dec { return x.edgeOp(y, (*apd.Context).Add, false) }

// Sub returns x-y.
func (x Dec) Sub(y Dec) Dec { return x.edgeOp(y, (*apd.Context).Sub, false) }

// AddExact is Add, and whether the sum is exact: not rounded to the
// context's 28 digits, finite. A running total built by adding and taking
// back terms is the fresh sum of the terms left only while every step was
// exact (a hostile 1E+30 added and taken back leaves 0.50 + 1E+30 − 1E+30
// rounded, not 0.50).
func (x Dec) AddExact(y Dec) (Dec, bool) {
	a, b := x.ptr(), y.ptr()
	if a.Form == apd.Finite && b.Form == apd.Finite {
		if gap := int64(a.Exponent) - int64(b.Exponent); gap <= farApart && gap >= -farApart {
			var d apd.Decimal
			cond, err := PyContext.Add(&d, a, b)
			if err == nil && d.Form == apd.Finite {
				return Dec{&d}, !cond.Rounded() && !cond.Inexact()
			}
		}
	}
	return x.Add(y), false
}

// Mul returns x*y.
func (x Dec) Mul(y Dec) Dec { return x.edgeOp(y, (*apd.Context).Mul, true) }

// Quo returns x/y (Python's `/`).
func (x Dec) Quo(y Dec) (Dec, error) { return pyQuo(x, y) }

// QuoInteger returns x//y (truncated toward zero, as Python's Decimal `//`).
func (x Dec) QuoInteger(y Dec) (Dec, error) { return x.op(y, (*apd.Context).QuoInteger) }

// Rem returns x%y (sign of x, as Python's Decimal `%`).
func (x Dec) Rem(y Dec) (Dec, error) { return x.op(y, (*apd.Context).Rem) }

// Neg returns -x.
func (x Dec) Neg() Dec {
	var d apd.Decimal
	d.Neg(x.ptr())
	return Dec{&d}
}

// Quantize returns x rounded to exponent exp with the given rounding (e.g.
// apd.RoundDown), like Python's x.quantize(Decimal('1E<exp>'), rounding).
func (x Dec) Quantize(exp int32, rounding apd.Rounder) (Dec, error) {
	c := *PyContext
	c.Rounding = rounding
	var d apd.Decimal
	if _, err := c.Quantize(&d, x.ptr(), exp); err != nil {
		return Dec{}, err
	}
	return Dec{&d}, nil
}

// Normalize strips trailing zeros, like Python's normalize().
func (x Dec) Normalize() Dec {
	var d apd.Decimal
	if _, _, err := PyContext.Reduce(&d, x.ptr()); err != nil {
		return x
	}
	return Dec{&d}
}

// Int64 returns the integral value of x; an error if x is not an integer
// that fits.
func (x Dec) Int64() (int64, error) { return x.ptr().Int64() }

// CoeffFloat is x's coefficient's magnitude as a float64 (rounded; with
// Exponent, x's size for bounds, never for accounting), read without a
// copy.
func (x Dec) CoeffFloat() float64 {
	c := &x.ptr().Coeff
	if c.IsUint64() {
		return float64(c.Uint64())
	}
	f, _ := new(big.Float).SetInt(c.MathBigInt()).Float64()
	return math.Abs(f)
}

// Float64 is for display only (bar widths), never for accounting.
func (x Dec) Float64() float64 {
	f, _ := x.ptr().Float64()
	return f
}

// Min returns the smaller of x and y (x when equal, as Python's min).
func Min(x, y Dec) Dec {
	if y.Less(x) {
		return y
	}
	return x
}

// Max returns the larger of x and y (x when equal).
func Max(x, y Dec) Dec {
	if x.Less(y) {
		return y
	}
	return x
}

// Sum adds values left to right starting from integer 0, like Python's sum().
func Sum(xs ...Dec) Dec {
	s := Zero
	for _, x := range xs {
		s = s.Add(x)
	}
	return s
}
