package model

import (
	"errors"
	"math"
	"testing"
)

// TestParseDec checks Python's Decimal(str) results (str() of each, as
// CPython 3.11 prints them).
func TestParseDec(t *testing.T) {
	tests := []struct {
		in, want string // want "" means InvalidOperation
	}{
		{"0", "0"},
		{"1", "1"},
		{"0.60", "0.60"},
		{"-0", "-0"},
		{"-0.00", "-0.00"},
		{"+.5", "0.5"},
		{"1.", "1"},
		{".", ""},
		{"", ""},
		{"  ", ""},
		{"1e3", "1E+3"},
		{"5E-2", "0.05"},
		{"1E-7", "1E-7"},
		{"0.0000001", "1E-7"},
		{"0e5", "0E+5"},
		{"1e0000000000000000000000000000005", "1E+5"},
		{"1234567890123456789012", "1234567890123456789012"},
		{"0.1234567890123456789012345678901234567890", "0.1234567890123456789012345678901234567890"},
		{"NaN", "NaN"},
		{"nan0001", "NaN1"},
		{"-snan01", "-sNaN1"},
		{"sNaN000", "sNaN"},
		{"nan-1", ""},
		{"Inf", "Infinity"},
		{"-infinity", "-Infinity"},
		{"infini", ""},
		{"inf1", ""},
		{"0x10", ""},
		{"1_0", "10"},
		{"_1", "1"},
		{"1__0", "10"},
		{"_ 77", ""},
		{" _77", "77"},
		{"\x1c_1", "1"},
		{" 1\x1c", "1"},
		{"1\u00a0", "1"},
		{"\u20001", "1"},
		{"1\u200b", ""},
		{"1 2", ""},
		{"\u0661.\u0665", "1.5"},
		{"\uff11\uff12", "12"},
		{"1\x00", ""},
		{"\t0.5", "0.5"},
	}
	for _, tt := range tests {
		for _, arena := range []*DecArena{nil, {}} {
			d, err := arena.ParseDec(tt.in)
			switch {
			case tt.want == "" && err == nil:
				t.Errorf("ParseDec(%q) = %s, want InvalidOperation", tt.in, d)
			case tt.want == "":
				if !errors.Is(err, ErrInvalidDecimal) {
					t.Errorf("ParseDec(%q) error %v does not wrap ErrInvalidDecimal", tt.in, err)
				}
			case err != nil:
				t.Errorf("ParseDec(%q): %v", tt.in, err)
			case d.String() != tt.want:
				t.Errorf("ParseDec(%q) = %s, want %s", tt.in, d, tt.want)
			}
		}
	}
}

// TestDecFromFloat64 checks Python's exact Decimal(float).
func TestDecFromFloat64(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.1, "0.1000000000000000055511151231257827021181583404541015625"},
		{1.5, "1.5"},
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{1e16, "10000000000000000"},
		{123456789012345678901234567890, "123456789012345677877719597056"},
		{-2.5, "-2.5"},
		{5e-324, "4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625E-324"},
		{math.Inf(1), "Infinity"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		if got := DecFromFloat64(tt.in).String(); got != tt.want {
			t.Errorf("DecFromFloat64(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestDecFromInts(t *testing.T) {
	tests := []struct {
		got  Dec
		want string
	}{
		{DecFromInt64(0), "0"},
		{DecFromInt64(-1), "-1"},
		{DecFromInt64(math.MinInt64), "-9223372036854775808"},
		{DecFromUint64(math.MaxUint64), "18446744073709551615"},
		{DecFromUint64(255), "255"},
	}
	for _, tt := range tests {
		if tt.got.String() != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func TestTrimPySpace(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  a b \t", "a b"},
		{"\x1c\x1d\x1e\x1fa\u0085\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000", "a"},
		{"\u200ba\ufeff", "\u200ba\ufeff"},
		{"\v\f\r\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := TrimPySpace(tt.in); got != tt.want {
			t.Errorf("TrimPySpace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestDecArenaShares checks that values from one arena are independent.
func TestDecArenaShares(t *testing.T) {
	var a DecArena
	var ds []Dec
	for i := range 40 {
		d, err := a.ParseDec("0.5" + string(rune('0'+i%10)))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	for i, d := range ds {
		if want := "0.5" + string(rune('0'+i%10)); d.String() != want {
			t.Fatalf("value %d = %s, want %s", i, d, want)
		}
	}
}
