package agentconfig

import (
	"slices"
	"strings"
)

// NaturalCompare orders strings the way BEP-1044's _natural_sort_key does:
// the string is split into alternating text and digit runs, text runs
// compare as strings and digit runs as integers, so "cuda2" < "cuda10" and
// "nvme0n1p2" < "nvme0n1p10". Keys that are equal as numbers ("01" and "1")
// compare equal, which is why callers sort stably, as Python's sorted does.
// Only ASCII digits form digit runs; device IDs are ASCII.
func NaturalCompare(a, b string) int {
	for i := 0; ; i++ {
		// Python's re.split(r'(\d+)', s) always yields a text run first, then
		// alternates; an exhausted key is shorter, and shorter sorts first.
		if a == "" && b == "" {
			return 0
		}
		var ra, rb string
		if i%2 == 0 {
			ra, a = cutRun(a, false)
			rb, b = cutRun(b, false)
			if c := strings.Compare(ra, rb); c != 0 {
				return c
			}
		} else {
			ra, a = cutRun(a, true)
			rb, b = cutRun(b, true)
			if c := compareDigits(ra, rb); c != 0 {
				return c
			}
		}
		// re.split yields a trailing empty text run after a final digit run,
		// so two keys end at the same parity: treat "ran out" as equal
		// lengths unless one still has runs left.
		if a == "" && b != "" {
			return -1
		}
		if b == "" && a != "" {
			return 1
		}
	}
}

// cutRun splits off the leading run of digits (digits true) or non-digits.
func cutRun(s string, digits bool) (string, string) {
	i := 0
	for i < len(s) && isASCIIDigit(s[i]) == digits {
		i++
	}
	return s[:i], s[i:]
}

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

// compareDigits compares two digit runs as integers of any length.
func compareDigits(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// SortNatural sorts ids in place by NaturalCompare, stably.
func SortNatural[S ~[]E, E ~string](ids S) {
	slices.SortStableFunc(ids, func(a, b E) int { return NaturalCompare(string(a), string(b)) })
}
