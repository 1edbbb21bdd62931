package partition

import (
	"slices"
	"testing"
)

func TestPlanNotSeen(t *testing.T) {
	p := &Plan{Warnings: []string{"earlier"}}
	p.NotSeen(nil)
	if !slices.Equal(p.Warnings, []string{"earlier"}) {
		t.Fatalf("no roots changed the warnings: %q", p.Warnings)
	}
	p.NotSeen([]string{"/s/a", "/s/b"})
	want := []string{"earlier",
		"/s/a: the kernels under it are not seen, so a moved device may be held",
		"/s/b: the kernels under it are not seen, so a moved device may be held"}
	if !slices.Equal(p.Warnings, want) {
		t.Errorf("warnings %q, want %q", p.Warnings, want)
	}
}
