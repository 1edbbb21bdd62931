package model

import (
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// formatAutoDecimal is the "s" format of v through the decimal path
// (Python's arithmetic in the 28-digit context), which formatSmallAuto
// must equal.
func formatAutoDecimal(v uint64) (string, error) {
	if v < 1024 {
		return big.NewInt(0).SetUint64(v).String(), nil
	}
	idx := (bits.Len64(v) - 1) / 10
	s, err := quantizeScaled(new(big.Int).SetUint64(v), uint(idx)*10)
	return s + binaryUnits[idx-1:idx], err
}

func checkSmallAuto(t *testing.T, v uint64) {
	t.Helper()
	got, err := formatSmallAuto(v)
	want, werr := formatAutoDecimal(v)
	if got != want || (err == nil) != (werr == nil) {
		t.Fatalf("formatSmallAuto(%d) = %q, %v; the decimal path says %q, %v", v, got, err, want, werr)
	}
}

// TestFormatSmallAutoMatchesDecimal: byte counts format without decimal
// division exactly as through it, for every unit up to 2^63 (GiB and up
// went through apd before: 8 % of an idle console's CPU): random values
// of every length, powers of two and their neighbours, and the values
// nearest each half-hundredth, where the rounding is decided.
func TestFormatSmallAutoMatchesDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 2))
	for range 200_000 {
		n := 1 + r.IntN(63)
		checkSmallAuto(t, r.Uint64N(1<<n))
	}
	for s := range 63 {
		for _, d := range []int64{-1, 0, 1} {
			if v := int64(1)<<s + d; v >= 0 {
				checkSmallAuto(t, uint64(v))
			}
		}
	}
	for shift := uint(10); shift <= 60; shift += 10 {
		for _, whole := range []uint64{1, 2, 3, 511, 1023} {
			if bits.Len64(whole)+int(shift) > 63 {
				continue
			}
			for k := range uint64(100) {
				// rem·100 nearest (2k+1)·2^(shift-1): x at k.5 hundredths.
				t2 := (2*k + 1) << (shift - 1)
				for _, rem := range []uint64{t2/100 - 1, t2 / 100, t2/100 + 1, (t2 + 99) / 100} {
					if rem < 1<<shift {
						checkSmallAuto(t, whole<<shift|rem)
					}
				}
			}
		}
	}
}

// FuzzFormatBinarySize holds the integer path of the "s" format to the
// decimal one for any byte count below 2^63.
func FuzzFormatBinarySize(f *testing.F) {
	for _, v := range []uint64{0, 1023, 1024, 1536, 4294967295, 85899345920, 1<<63 - 1, 1<<40 + 1<<39} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint64) {
		v &= 1<<63 - 1
		checkSmallAuto(t, v)
		want, _ := formatAutoDecimal(v)
		if got := FormatBinarySize(NewDec(int64(v), 0)); got != want {
			t.Fatalf("FormatBinarySize(%d) = %q, want %q", v, got, want)
		}
	})
}

// TestIdenticalIsThePrintedForm: Identical, which compares finite values
// without printing them, says what comparing the printed forms says.
func TestIdenticalIsThePrintedForm(t *testing.T) {
	vals := []string{"0", "-0", "0.0", "0E+2", "1", "1.0", "1.00", "-1", "10", "1E+1", "1E+3", "1000", "0.1", "0.10",
		"123456789012345678901234567890", "1234567890123456789012345678.90", "Infinity", "-Infinity", "NaN", "sNaN"}
	for _, a := range vals {
		for _, b := range vals {
			x, y := MustDec(a), MustDec(b)
			if got, want := x.Identical(y), x.String() == y.String(); got != want {
				t.Errorf("Identical(%s, %s) = %v, want %v", a, b, got, want)
			}
		}
	}
}
