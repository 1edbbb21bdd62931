package hugeheap

import "testing"

// TestThpDisabled: GODEBUG's disablethp=1 turns Prepare off, the last
// setting winning.
func TestThpDisabled(t *testing.T) {
	for _, c := range []struct {
		godebug string
		want    bool
	}{
		{"", false}, {"disablethp=1", true}, {"gctrace=1, disablethp=1", true},
		{"disablethp=0", false}, {"disablethp=1,disablethp=0", false}, {"madvdontneed=1", false},
	} {
		if got := thpDisabled(c.godebug); got != c.want {
			t.Errorf("GODEBUG=%q: disabled %v, want %v", c.godebug, got, c.want)
		}
	}
}
