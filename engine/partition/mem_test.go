package partition

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestParseMemAndCheckMem(t *testing.T) {
	align, total := model.NewDec(16<<20, 0), model.NewDec(256<<30, 0)
	tests := []struct {
		in, bytes, warn, err string
	}{
		{in: "120G", bytes: "128849018880"},
		{in: " 96 GiB ", bytes: "103079215104"},
		{in: "536870912", bytes: "536870912", warn: "no unit: that is bytes"},
		{in: "0.5G", bytes: "536870912"},
		{in: "0.3K", err: "not a whole number of bytes (307.2)"},
		{in: "", err: "a size is needed"},
		{in: "12Q", err: "not a size"},
		{in: "1M", bytes: "1048576", err: "below the config's memory-align-size 16 MiB (fgtop's rule: main loads it"},
		{in: "0", bytes: "0", warn: "no unit", err: "mem must be above zero"},
		{in: "300G", bytes: "322122547200", err: "more than the node's 256 GiB (fgtop's rule: main loads it"},
		{in: "1E10000Y", err: "more memory than any node has"},
		{in: "9223372036854775808", err: "more memory than any node has"},
		{in: "8E", err: "more memory than any node has"},
		{in: "7E", bytes: "8070450532247928832", err: "more than the node's 256 GiB"},
	}
	for _, tt := range tests {
		v, warn, err := ParseMem(tt.in)
		if err == nil {
			err = CheckMem(v, total, align)
		}
		switch {
		case tt.err == "" && err != nil, tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
		case tt.bytes != "" && v.String() != tt.bytes:
			t.Errorf("%q: %s bytes, want %s", tt.in, v, tt.bytes)
		case (tt.warn == "") != (warn == "") || !strings.Contains(warn, tt.warn):
			t.Errorf("%q: warning %q, want %q", tt.in, warn, tt.warn)
		}
	}
	// Zero bounds are unknown bounds.
	if err := CheckMem(model.NewDec(1, 0), model.Dec{}, model.Dec{}); err != nil {
		t.Errorf("unbounded: %v", err)
	}
}

// FuzzParseMem feeds mem sizes as operators type them (--mem AGENT=SIZE
// and the console's mem field): never a panic; what is accepted is whole
// bytes and reads back the same from the binary size it is written as.
func FuzzParseMem(f *testing.F) {
	for _, s := range []string{"120G", "96 GiB", "0.3K", "536870912", "1e400", "-5g", "1_024", "0.5g", "12Q", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, _, err := ParseMem(s)
		if err != nil {
			return
		}
		if !wholeBytes(v) {
			t.Fatalf("ParseMem(%q) = %s: not whole bytes", s, v)
		}
		if v.Sign() > 0 {
			back, err := model.ParseFiniteBinarySize(v.String())
			if err != nil || !back.Equal(v) {
				t.Fatalf("ParseMem(%q) = %s does not read back: %s, %v", s, v, back, err)
			}
		}
	})
}
