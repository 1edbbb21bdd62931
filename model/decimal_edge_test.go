package model

import (
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// TestEdgeExponentsArePython: sums, differences and products of operands
// whose exponents lie near the context's limits (where apd refuses and the
// operation is redone moved) and of ordinary ones beside them print what
// Python's Decimal prints, run by python3 on the same pairs; Python's
// errors (Overflow) are NaN here. Without the moved path 0 + 5E-999999 is
// NaN.
func TestEdgeExponentsArePython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the oracle for this test")
	}
	rng := rand.New(rand.NewSource(7))
	exps := []int{-1000030, -1000026, -1000020, -999999, -999990, -500000, -100001, -99999, -30, -1, 0, 1, 30, 99999, 100001, 500000, 999970, 999999}
	coeffs := []string{"0", "1", "5", "9", "25", "1234567890123456789012345678", "99999999999999999999999999995", "1000000000000000000000000000000001"}
	var ops [][2]string
	for _, s := range []string{"0", "1", "5E-999999", "0E-999999", "0E+5", "9E+999999", "1E-1000026", "0.25", "-5E-999999", "7E+100001"} {
		for _, u := range []string{"0", "1", "5E-999999", "0E-999999", "0E+5", "9E+999999", "1E-1000026", "0.25", "-5E-999999", "7E+100001"} {
			ops = append(ops, [2]string{s, u})
		}
	}
	for len(ops) < 3000 {
		var p [2]string
		for i := range p {
			sign := ""
			if rng.Intn(3) == 0 {
				sign = "-"
			}
			p[i] = fmt.Sprintf("%s%sE%+d", sign, coeffs[rng.Intn(len(coeffs))], exps[rng.Intn(len(exps))]+rng.Intn(5)-2)
		}
		ops = append(ops, p)
	}
	var in strings.Builder
	for _, p := range ops {
		fmt.Fprintf(&in, "%s %s\n", p[0], p[1])
	}
	script := `
import sys
from decimal import Decimal, getcontext
def run(f):
    try:
        return str(f())
    except Exception:
        return "NaN"
for line in sys.stdin:
    a, b = (Decimal(s) for s in line.split())
    print(run(lambda: a + b), run(lambda: a - b), run(lambda: a * b))
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(ops) {
		t.Fatalf("python3 answered %d lines for %d pairs", len(lines), len(ops))
	}
	bad := 0
	for i, p := range ops {
		a, b := MustDec(p[0]), MustDec(p[1])
		got := fmt.Sprintf("%s %s %s", a.Add(b), a.Sub(b), a.Mul(b))
		if got != lines[i] {
			bad++
			if bad <= 10 {
				t.Errorf("%s and %s: + - * give %q, Python %q", p[0], p[1], got, lines[i])
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d pairs of %d differ", bad, len(ops))
	}
}
