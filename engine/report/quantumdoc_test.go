package report

import (
	"os"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestUnknownQuantumDocumented: fgtop_allocator_info (which uses
// AllocatorOf's words) says quantum_size="" in fractional mode while the
// quantum is unknown, as in discrete mode; docs/exporter.md did not say
// what an empty quantum_size means.
func TestUnknownQuantumDocumented(t *testing.T) {
	if q := AllocatorOf(model.Allocator{Fractional: true}).QuantumSize; q != "" {
		t.Fatalf("an unknown quantum is %q, not empty", q)
	}
	if q := AllocatorOf(model.Allocator{Fractional: true, Quantum: model.MustDec("0.01")}).QuantumSize; q != "0.01" {
		t.Fatalf("a quantum of 0.01 is %q", q)
	}
	raw, err := os.ReadFile("../../docs/exporter.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "| `fgtop_allocator_info{")
	if i < 0 {
		t.Fatal("docs/exporter.md has no fgtop_allocator_info row")
	}
	row := text[i:]
	row = row[:strings.Index(row, "\n")]
	for _, want := range []string{`quantum_size=""`, "discrete", "fractional` mode while the quantum is unknown"} {
		if !strings.Contains(row, want) {
			t.Errorf("the fgtop_allocator_info row does not say %q: %s", want, row)
		}
	}
}
