package model

import (
	"encoding/json"
	"errors"
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"strings"
	"testing"
)

// caseValues returns the values of the *_SHARES and SCRATCH_SIZE lines of
// testdata/fixtures/resource-cases.json, as fuzz seeds (none when the
// corpus is absent).
func caseValues(f *testing.F) []string {
	p, err := testfix.Path("resource-cases.json")
	if err != nil {
		return nil
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var cases []struct{ Input string }
	if json.Unmarshal(raw, &cases) != nil {
		return nil
	}
	var out []string
	for _, c := range cases {
		if len(c.Input) > 4<<10 {
			continue
		}
		for _, line := range strings.Split(c.Input, "\n") {
			k, v, ok := strings.Cut(line, "=")
			switch {
			case !ok:
			case strings.HasPrefix(k, "SCRATCH_SIZE"):
				out = append(out, v)
			case strings.HasSuffix(k, "_SHARES"):
				for _, e := range strings.Split(v, ",") {
					if _, amt, ok := strings.Cut(e, ":"); ok {
						out = append(out, amt)
					}
				}
			}
		}
	}
	return out
}

var decSeeds = []string{
	"0", "1", "0.60", "-0", "1e3", "5E-2", "+.5", "1.", "NaN", "sNaN12", "-Infinity", "1_0",
	"\u0661.\u0665", " 1 ", "_ 7", "0.1000000000000000055511151231257827021181583404541015625",
	"1E+999999", "1e-1000", "123456789012345678901234567890",
}

// FuzzParseDec checks that ParseDec never panics, fails only with
// ErrInvalidDecimal, and that what it prints parses back identically.
func FuzzParseDec(f *testing.F) {
	for _, s := range append(decSeeds, caseValues(f)...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDec(s)
		var arena DecArena
		d2, err2 := arena.ParseDec(s)
		if (err == nil) != (err2 == nil) || err == nil && !d.Identical(d2) {
			t.Fatalf("arena disagrees: %v %v / %v %v", d, err, d2, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidDecimal) {
				t.Fatalf("error %v does not wrap ErrInvalidDecimal", err)
			}
			return
		}
		back, err := ParseDec(d.String())
		if err != nil || !back.Identical(d) {
			t.Fatalf("%q -> %s -> %v, %v", s, d, back, err)
		}
	})
}

// FuzzParseBinarySize checks that ParseBinarySize never panics, fails only
// with a *BinarySizeError, returns integers (or Infinity) whose printed
// form parses back identically, and that formatting never panics.
func FuzzParseBinarySize(f *testing.F) {
	for _, s := range append([]string{"1g", "1.5g", "117.74m", "4 GiB", "10kb", "1536.000", "inf", "-1g", "infk", "snank", "2\u212a", "_\t16"}, caseValues(f)...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseBinarySize(s)
		fd, ferr := ParseFiniteBinarySize(s)
		if err != nil {
			var be *BinarySizeError
			if !errors.As(err, &be) || be.Kind == "" || !errors.Is(err, ErrInvalidBinarySize) {
				t.Fatalf("error %v is not a proper BinarySizeError", err)
			}
			if ferr == nil {
				t.Fatalf("finite parse succeeded where the other failed: %v", fd)
			}
			return
		}
		if !d.IsFinite() {
			if ferr == nil {
				t.Fatalf("finite parse accepted %q", s)
			}
			return
		}
		if ferr != nil || !fd.Identical(d) {
			t.Fatalf("finite parse: %v, %v; want %v", fd, ferr, d)
		}
		if d.Exponent() != 0 {
			t.Fatalf("%q -> %s has exponent %d", s, d, d.Exponent())
		}
		if str := d.String(); len(strings.TrimPrefix(str, "-")) <= pyIntMaxDigits {
			back, err := ParseBinarySize(str)
			if err != nil || !back.Identical(d) {
				t.Fatalf("%q -> %s -> %v, %v", s, d, back, err)
			}
		}
		if out, err := FormatBinarySizeSpec(d, "s"); err == nil {
			if _, err := ParseBinarySize(out); err != nil {
				t.Fatalf("formatted %s as %q, which does not parse: %v", d, out, err)
			}
		}
		FormatBinarySizeSpec(d, "m")
	})
}
