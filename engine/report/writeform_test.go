package report

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// WriteForm and WriteValue write what Marshal(Value(...)) makes, in
// each form and layout; WriteValue in one write.
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
			var one countWriter
			if err := WriteValue(&one, s, form, indent); err != nil || one.writes != 1 || !bytes.Equal(one.b.Bytes(), want) {
				t.Errorf("WriteValue form %q indent %v: %v, %d writes", form, indent, err, one.writes)
			}
		}
	}
}

// countWriter counts the writes it takes.
type countWriter struct {
	b      bytes.Buffer
	writes int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.b.Write(p)
}
