package alloc

import (
	"errors"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestPythonKindsInPlainWords: where Python itself raises (not one of
// Backend.AI's resource errors), Kind keeps the class name for parity and
// the message says what happened without the interpreter's text.
func TestPythonKindsInPlainWords(t *testing.T) {
	huge, err := model.ParseDec("1e30")
	if err != nil {
		t.Fatal(err)
	}
	nan, err := model.ParseDec("NaN")
	if err != nil {
		t.Fatal(err)
	}
	allocErr := func(order []model.DeviceName) error {
		_, err := Allocate(node(t), req("cuda.shares", "0.5", "tpu.device", "1"), order, Interleaved, Options{})
		return err
	}
	tests := []struct {
		name string
		err  error
		kind string
		want string
	}{
		{"plugin not in the order", allocErr(allocOrder), KindValueError, "device plugin tpu is not in the allocation order (cuda, cpu, mem)"},
		{"plugin without a map", allocErr(append(allocOrder[:3:3], "tpu")), KindKeyError, "no tpu devices here"},
		{"too large to quantize", errInvalidAmount("cuda.shares", huge), KindInvalidOperation, "amount 1E+30 for cuda.shares is too large"},
		{"not a number", errInvalidAmount("cuda.shares", nan), KindInvalidOperation, "amount NaN for cuda.shares is not a number"},
		{"allocator crash", errIndex("cuda.shares", "no window of devices to evaluate"), KindIndexError, "crashes here for cuda.shares"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ae *Error
			if !errors.As(tt.err, &ae) || ae.Kind() != tt.kind {
				t.Fatalf("error %v, want kind %s", tt.err, tt.kind)
			}
			msg := ae.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q lacks %q", msg, tt.want)
			}
			for _, py := range []string{"<class", "is not in list", "list index out of range", "'tpu'", tt.kind} {
				if strings.Contains(msg, py) {
					t.Errorf("message %q shows Python's %q", msg, py)
				}
			}
		})
	}
}
