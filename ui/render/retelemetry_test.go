package render

import (
	"reflect"
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestRetelemetryMatchesFullDerive: a snapshot where only the telemetry
// moved is derived from the previous derivation, and what comes out is
// what deriving it from scratch gives; a snapshot where anything else
// changed (an agent's health, an issue, a device's capacity) is derived
// in full.
func TestRetelemetryMatchesFullDerive(t *testing.T) {
	o := DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false), Looks: kit.LookDims{Colours: 6, Shapes: 1}}
	for name, s := range map[string]*model.Snapshot{
		"fixture": fake.Node(fake.Options{}), "degraded": fake.Node(fake.Options{Source: "degraded"}),
		"large": fake.Large(8, 40),
	} {
		t.Run(name, func(t *testing.T) {
			c := NewDeriveCache()
			Derive(s, o, c)
			check := func(s *model.Snapshot, full, reused int) {
				t.Helper()
				got := Derive(s, o, c)
				if c.Full != full || c.Reused != reused {
					t.Fatalf("derived %d in full and %d from the previous one, want %d and %d", c.Full, c.Reused, full, reused)
				}
				if want := Derive(s, o, nil); !reflect.DeepEqual(got, want) {
					t.Fatalf("snapshot %d: the derivation differs from a fresh one", s.Seq)
				}
				for i := range got.Devs {
					if r := &got.Devs[i]; r.Dev != &s.Devices[r.devIdx] {
						t.Fatalf("row %s points into another snapshot", r.Label)
					}
				}
				for i := range got.Agents {
					if got.Agents[i].A != &s.Agents[i] {
						t.Fatalf("agent row %d points into another snapshot", i)
					}
				}
			}
			for n := 1; n <= 3; n++ {
				s = fake.Tick(s, n)
				check(s, 1, n)
			}
			s = fake.Tick(s, 4)
			s.Agents[0].Health = model.AgentHealth{State: model.AgentDown, Detail: "connection refused"}
			check(s, 2, 3)
			s = fake.Tick(s, 5)
			s.Issues = append(s.Issues, model.Issue{Severity: model.SevWarning, Code: "test-issue", Message: "a new issue"})
			check(s, 3, 3)
			s = fake.Tick(s, 6)
			s.Devices[0].Capacity = model.MustDec("2.00")
			check(s, 4, 3)
			s = fake.Tick(s, 7)
			check(s, 4, 4)
		})
	}
}
