package report

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// WriteForm writes what Marshal(Value(...)) makes, in each form and
// layout, streamed or not.
func TestWriteForm(t *testing.T) {
	s := randomSnapshot(rand.New(rand.NewPCG(7, 1)), 20)
	for _, form := range []string{FormSnapshot, FormAllocRatio, FormAllocAbsolute} {
		for _, indent := range []bool{true, false} {
			want, err := Marshal(Value(s, form), indent)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteForm(&got, s, form, indent); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("form %q indent %v:\n%s\nwant\n%s", form, indent, got.Bytes(), want)
			}
		}
	}
}
