package model

import (
	"errors"
	"strings"
	"testing"
)

// TestParseBinarySize checks BinarySize.from_str results: str(Decimal) of
// the integer, or the Python exception class.
func TestParseBinarySize(t *testing.T) {
	tests := []struct {
		in, want, kind string
	}{
		{"1g", "1073741824", ""},
		{"1.5g", "1610612736", ""},
		{"117.74m", "123459338", ""},
		{"512m", "536870912", ""},
		{"4GiB", "4294967296", ""},
		{"4 GiB", "4294967296", ""},
		{"10kb", "10240", ""},
		{"2K", "2048", ""},
		{"2\u212a", "2048", ""}, // Kelvin sign lower-cases to k
		{"1_024", "1024", ""},
		{"_\t16", "16", ""}, // int() strips what the underscore hid
		{"1536.000", "1536", ""},
		{"1.", "1", ""},
		{"123 bytes", "123", ""},
		{"1 b", "1", ""},
		{"-1g", "-1073741824", ""},
		{"-0", "0", ""},
		{"-0.0001k", "0", ""},
		{"0.001k", "1", ""},
		{"1e3k", "1024000", ""},
		{"\u0661\u0662\u0663", "123", ""},
		{"1" + strings.Repeat("0", 30) + "k", "1024000000000000000000000000000000", ""},
		{"1.23456789012345678901234567891e5y", "149250099843740345319318542000", ""},
		{"inf", "Infinity", ""},
		{"INFINITY", "Infinity", ""},
		{" inf", "", "ValueError"},
		{"İnf", "", "ValueError"},
		{"1.5", "", "ValueError"},
		{"1e3", "", "ValueError"},
		{"100bytes", "", "ValueError"},
		{"lots", "", "ValueError"},
		{"1x", "", "ValueError"},
		{"g", "", "ValueError"},
		{"b", "", "ValueError"},
		{"", "", "ValueError"},
		{strings.Repeat("1", 4301), "", "ValueError"},
		{"infk", "", "OverflowError"},
		{"nank", "", "ValueError"},
		{"snank", "", "InvalidOperation"},
		{"1e999999k", "", "Overflow"},
	}
	for _, tt := range tests {
		for _, arena := range []*DecArena{nil, {}} {
			d, err := arena.ParseBinarySize(tt.in)
			var be *BinarySizeError
			switch {
			case tt.kind == "" && err != nil:
				t.Errorf("ParseBinarySize(%q): %v", tt.in, err)
			case tt.kind == "" && d.String() != tt.want:
				t.Errorf("ParseBinarySize(%q) = %s, want %s", tt.in, d, tt.want)
			case tt.kind != "" && (!errors.As(err, &be) || be.Kind != tt.kind || !errors.Is(err, ErrInvalidBinarySize)):
				t.Errorf("ParseBinarySize(%q) = %v, %v; want %s", tt.in, d, err, tt.kind)
			}
		}
	}
	if _, err := ParseFiniteBinarySize("inf"); err == nil {
		t.Error("ParseFiniteBinarySize(inf) succeeded")
	}
	if d, err := ParseFiniteBinarySize("10g"); err != nil || d.String() != "10737418240" {
		t.Errorf("ParseFiniteBinarySize(10g) = %v, %v", d, err)
	}
}

// TestFormatBinarySize checks format(BinarySize(x), spec) results.
func TestFormatBinarySize(t *testing.T) {
	tests := []struct {
		in, spec, want, kind string
	}{
		{"0", "s", "0", ""},
		{"1023", "s", "1023", ""},
		{"1024", "s", "1k", ""},
		{"1536", "s", "1.5k", ""},
		{"4294967296", "s", "4g", ""},
		{"4294967295", "s", "4g", ""},
		{"1610612736", "s", "1.5g", ""},
		{"123456789", "s", "117.74m", ""},
		{"1048575", "s", "1024k", ""},
		{"1025", "s", "1k", ""},
		{"-5000", "s", "-5000", ""},
		{"-1208925819614629174706176000000000000000", "s", "-1208925819614629174706176000000000000000", ""},
		{"-1208925819614629174706176000000000000000", "m", "", "InvalidOperation"},
		{"1237940039285380274899124223", "s", "1024y", ""},
		{"1237940039285380274899124224", "s", "", "IndexError"},
		{"Infinity", "s", "", "OverflowError"},
		{"NaN", "s", "", "ValueError"},
		{"0", "m", "0m", ""},
		{"123", "m", "0m", ""},
		{"1572864", "m", "1.5m", ""},
		{"10737418240", "m", "10240m", ""},
		{"-5", "m", "-0m", ""},
		{"1048576000000000000000000000000000000", "m", "", "InvalidOperation"},
		{"1536", " ", "1536", ""},
		{"1536", "G", "0g", ""},
		{"1536", "x", "", "ValueError"},
		{"1536", "mm", "", "ValueError"},
	}
	for _, tt := range tests {
		got, err := FormatBinarySizeSpec(MustDec(tt.in), tt.spec)
		var be *BinarySizeError
		switch {
		case tt.kind == "" && (err != nil || got != tt.want):
			t.Errorf("format(%s, %q) = %q, %v; want %q", tt.in, tt.spec, got, err, tt.want)
		case tt.kind != "" && (!errors.As(err, &be) || be.Kind != tt.kind):
			t.Errorf("format(%s, %q) = %q, %v; want %s", tt.in, tt.spec, got, err, tt.kind)
		}
	}
	if got := FormatBinarySize(MustDec("1610612736")); got != "1.5g" {
		t.Errorf("FormatBinarySize = %q", got)
	}
	if got := FormatBinarySizeUnit(MustDec("1572864"), 'm'); got != "1.5m" {
		t.Errorf("FormatBinarySizeUnit = %q", got)
	}
	if got := FormatBinarySize(MustDec("Infinity")); got != "Infinity" {
		t.Errorf("FormatBinarySize(Infinity) = %q", got)
	}
}

func TestFormatBinarySizeExact(t *testing.T) {
	for in, want := range map[string]string{
		"4294967296": "4g",
		"4294967295": "4g (4294967295 bytes)",
		"1536":       "1.5k",
		"1000":       "1000",
		"8589934591": "8g (8589934591 bytes)",
	} {
		if got := FormatBinarySizeExact(MustDec(in)); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
