package kit

import (
	"strings"
	"testing"
)

// TestPlotRowsHugeReading: a reading past any int (an amount of 1e23
// shares held against 1.00) plots as a full column, not the lowest int's
// near-empty one, and a reading over 1 is full as well.
func TestPlotRowsHugeReading(t *testing.T) {
	levels := []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}
	for _, v := range []float32{1e23, 1.6, 1} {
		rows := PlotRows([]float32{v}, 4, levels)
		for i, r := range rows {
			if strings.TrimSpace(r) != "█" {
				t.Errorf("reading %g, row %d: %q, want a full cell", v, i, r)
			}
		}
	}
}
