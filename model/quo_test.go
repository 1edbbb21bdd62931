package model

import "testing"

func TestQuoMatchesPython(t *testing.T) {
	for _, c := range [][3]string{{"4", "2", "2"}, {"1.20", "2", "0.60"}, {"1", "3", "0.3333333333333333333333333333"}, {"1.0", "4", "0.25"}, {"0", "5", "0"}, {"0.00", "2", "0.00"}, {"5", "0.5", "1E+1"}, {"12", "3.0", "4"}, {"7", "2", "3.5"}} {
		q, err := MustDec(c[0]).Quo(MustDec(c[1]))
		if err != nil || q.String() != c[2] {
			t.Errorf("%s/%s=%v want %s", c[0], c[1], q, c[2])
		}
	}
}
