package fleet

import (
	"errors"
	"slices"
	"testing"
)

func TestRecordNames(t *testing.T) {
	host := func() (string, error) { return "h1", nil }
	for _, tt := range []struct {
		name     string
		node     string
		demo     bool
		hostname func() (string, error)
		want     []string
	}{
		{"named node on a host", "gpu-07", false, host, []string{"gpu-07", "h1"}},
		{"the host's own name once", "h1", false, host, []string{"h1"}},
		{"the demo's own record", "fgtop-demo", true, host, []string{"fgtop-demo"}},
		{"no name", "", false, host, []string{"h1"}},
		{"no host name", "n", false, func() (string, error) { return "", errors.New("no") }, []string{"n"}},
		{"nothing", "", true, host, nil},
	} {
		if got := recordNamesOf(tt.node, tt.demo, tt.hostname); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := RecordNames("x", true); !slices.Equal(got, []string{"x"}) {
		t.Errorf("RecordNames(x, demo) = %q", got)
	}
}
