package partition

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/fgtop/fgtop/model"
)

// maxMem is the largest size ParseMem takes: 8 EiB - 1, what a byte count
// in an int64 holds (a node's memory is one). Beyond it a typo such as
// 1E10000Y would be written as thousands of digits that no agent reads.
var maxMem = model.NewDec(1<<63-1, 0)

// ParseMem reads an agent's mem share as an operator writes it: a size
// such as 120G or 96GiB, or a bare number of bytes (allowed, but rarely
// what was meant: warn says so). The size must be whole bytes: the size
// parser drops a fraction of a byte ("0.3K" reads as 307), and the file
// would then not say what was typed. `fgtop plan/apply --mem` and the
// console's mem field both read sizes here; CheckMem then bounds them.
func ParseMem(s string) (v model.Dec, warn string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return model.Dec{}, "", errors.New("a size is needed: write e.g. 120G or 96GiB")
	}
	v, err = model.ParseFiniteBinarySize(s)
	if err != nil {
		return model.Dec{}, "", errors.New("not a size: write e.g. 120G or 96GiB")
	}
	if maxMem.Less(v) {
		return model.Dec{}, "", fmt.Errorf("%s is more memory than any node has (at most %s)", s, HumanBytes(maxMem))
	}
	if err := CheckWholeBytes(s); err != nil {
		return model.Dec{}, "", err
	}
	num, unit := splitSize(s)
	if unit == "" {
		warn = "no unit: that is bytes (write " + num + "G for GiB)"
	}
	return v, warn, nil
}

// CheckWholeBytes refuses a size, as typed, that is not a whole number
// of bytes ("0.3K" is 307.2): the size parser would drop the fraction,
// and what is used would not be what was typed. A size it cannot read
// exactly passes, for the size parser to judge. ParseMem and the mem of a
// request (simulate --request, plan --arrivals) are held to it alike.
func CheckWholeBytes(s string) error {
	s = strings.TrimSpace(s)
	num, unit := splitSize(s)
	if exact, ok := exactBytes(num, unit); ok && !wholeBytes(exact) {
		return fmt.Errorf("%s is not a whole number of bytes (%s): write e.g. 120G or 96GiB", s, exact.String())
	}
	return nil
}

// CheckMem says why v bytes cannot be an agent's mem share: not above
// zero, below the config's memory-align-size align (the agent cannot
// align less), or above the node's memory total (either zero: unknown).
// The last two are fgtop's rules, not main's (which loads both), and say
// so: the plan's other reasons are the agent's.
// Draft applies it to every MemSet, so the CLI and the console refuse the
// same sizes.
func CheckMem(v, total, align model.Dec) error {
	switch {
	case v.Sign() <= 0:
		return errors.New("mem must be above zero")
	case !align.IsZero() && v.Less(align):
		return fmt.Errorf("below the config's memory-align-size %s (fgtop's rule: main loads it, but the agent reports its memory rounded down to that size, none)", HumanBytes(align))
	case !total.IsZero() && total.Less(v):
		return fmt.Errorf("more than the node's %s (fgtop's rule: main loads it and caps it at the node's memory, so the file would not say what the agent gets)", HumanBytes(total))
	}
	return nil
}

// HumanBytes says a byte count the way an operator reads it: "120 bytes",
// "512 MiB", with the exact count when the short form rounds.
func HumanBytes(v model.Dec) string {
	if v.Less(model.NewDec(1024, 0)) {
		if v.Equal(model.One) {
			return "1 byte"
		}
		return v.String() + " bytes"
	}
	s := model.FormatBinarySize(v)
	unit := s[len(s)-1:]
	out := s[:len(s)-1] + " " + strings.ToUpper(unit) + "iB"
	if back, err := model.ParseFiniteBinarySize(s); err != nil || !back.Equal(v) {
		out += " (" + v.String() + " bytes)"
	}
	return out
}

// wholeBytes reports whether d has no fraction (Rem would fail on a
// quotient beyond the context's precision, huge as it is).
func wholeBytes(d model.Dec) bool {
	var integ, frac apd.Decimal
	d.Apd().Modf(&integ, &frac)
	return frac.IsZero()
}

// splitSize splits a size as typed into its number (with its sign) and its
// unit, both trimmed ("96 GiB" -> "96", "GiB").
func splitSize(s string) (num, unit string) {
	sign := 0
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		sign = 1
	}
	i := strings.IndexFunc(s[sign:], func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == '_') })
	if i < 0 {
		return s, ""
	}
	return strings.TrimSpace(s[:sign+i]), strings.TrimSpace(s[sign+i:])
}

// exactBytes is num × unit without any rounding, when both are plain (a
// decimal and one of b, k, m, g, t, p, e with an optional "ib"/"b").
func exactBytes(num, unit string) (model.Dec, bool) {
	d, err := model.ParseDec(strings.ReplaceAll(num, "_", ""))
	if err != nil {
		return model.Dec{}, false
	}
	u := strings.ToLower(unit)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "ib"), "b")
	pow := 0
	switch u {
	case "":
	case "k", "m", "g", "t", "p", "e":
		pow = strings.Index("kmgtpe", u) + 1
	default:
		return model.Dec{}, false
	}
	for range pow {
		d = d.Mul(model.NewDec(1024, 0))
	}
	return d, true
}
