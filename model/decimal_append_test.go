package model

import (
	"math/rand/v2"
	"testing"
)

// AppendString is String, appended.
func TestAppendStringIsString(t *testing.T) {
	vals := []string{"0", "-0", "0.0", "0.000", "0.50", "-0.5", "1", "1.0", "1E+2", "1E-7", "0.0000001", "0.000001", "0.00001234",
		"100", "NaN", "sNaN", "-Infinity", "Infinity", "12345678901234567890123456789", "18446744073709551615",
		"18446744073709551616", "-18446744073709551615.5", "0.1234567890123456789", "123.456", "4294967296"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		vals = append(vals, NewDec(r.Int64N(1<<62)-(1<<61), int32(r.IntN(30)-25)).String())
	}
	for _, v := range vals {
		x := MustDec(v)
		if got, want := string(x.AppendString([]byte("x"))), "x"+x.String(); got != want {
			t.Errorf("%s: AppendString %q, String %q", v, got, want)
		}
	}
	var zero Dec
	if got := string(zero.AppendString(nil)); got != zero.String() {
		t.Errorf("zero value: %q", got)
	}
}
