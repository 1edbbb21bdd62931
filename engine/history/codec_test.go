package history

import (
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestSameIsIdentical(t *testing.T) {
	vals := []string{"0", "0.0", "0.50", "0.5", "1", "1.0", "-0", "1E+2", "100", "NaN", "Infinity", "0.25", "00.25"}
	for _, x := range vals {
		for _, y := range vals {
			a, b := model.MustDec(x), model.MustDec(y)
			if same(a, b) != a.Identical(b) {
				t.Errorf("same(%s, %s) = %v, Identical %v", x, y, same(a, b), a.Identical(b))
			}
		}
	}
	if !same(model.Dec{}, model.MustDec("0")) != !(model.Dec{}).Identical(model.MustDec("0")) {
		t.Error("zero value")
	}
}
