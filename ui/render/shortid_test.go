package render

import (
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestTellShortIDsApart: kernels whose first 8 characters are alike get
// the prefix that tells each from its neighbours; the others keep 8.
func TestTellShortIDsApart(t *testing.T) {
	for _, c := range []struct {
		name string
		ids  []string
		want []string
	}{
		{"apart", []string{"0a1b2c3d-0000", "0a1b2c3e-0000"}, []string{"0a1b2c3d", "0a1b2c3e"}},
		{"alike at 8", []string{"0a1b2c3d-1111-4000", "0a1b2c3d-2222-4000", "9f000000-0000"},
			[]string{"0a1b2c3d-1", "0a1b2c3d-2", "9f000000"}},
		{"three alike, the middle one alike longest", []string{"abcdef01-aa00", "abcdef01-ab00", "abcdef01-ab01", "ffffffff"},
			[]string{"abcdef01-aa", "abcdef01-ab00", "abcdef01-ab01", "ffffffff"}},
		{"one a prefix of the other", []string{"abcdef01", "abcdef01-77"}, []string{"abcdef01", "abcdef01-"}},
		{"alike whole", []string{"abcdef01-x", "abcdef01-x"}, []string{"abcdef01-x", "abcdef01-x"}},
		{"short ids", []string{"k1", "k2"}, []string{"k1", "k2"}},
	} {
		rows := make([]KernRow, len(c.ids))
		for i, id := range c.ids {
			rows[i] = KernRow{K: &model.Kernel{ID: model.KernelID(id)}, Short: kit.ShortKernel(model.KernelID(id))}
		}
		TellShortIDsApart(rows)
		seen := map[string]bool{}
		for i, r := range rows {
			if r.Short != c.want[i] {
				t.Errorf("%s: row %d (%s) reads %q, want %q", c.name, i, c.ids[i], r.Short, c.want[i])
			}
			if seen[r.Short] && c.name != "alike whole" {
				t.Errorf("%s: %q twice", c.name, r.Short)
			}
			seen[r.Short] = true
		}
	}
}
