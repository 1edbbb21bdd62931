package replay

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
)

// asMaps is rec with every session's Held made into Got maps (Held
// cleared): the record as the replay kept it before history.Held.
func asMaps(rec *Record) *Record {
	r := *rec
	r.Sessions = append([]Session(nil), rec.Sessions...)
	for i := range r.Sessions {
		s := &r.Sessions[i]
		s.Got, s.Held = s.Alloc(), history.Held{}
	}
	return &r
}

// TestHeldRunsAsMaps: a record's sessions kept as the walk keeps them
// (Held) replay as the same sessions with their allocations as maps: the
// sessions, every result, the disagreements, the text and the JSON, on
// the scripted week with every device, with the GPUs alone and with a
// GPU the record's allocations name left out (loads that fall back to
// the maps' way), under the partition in force and four amounts, worded
// or not, whole and in two or three chunks.
func TestHeldRunsAsMaps(t *testing.T) {
	rec := loadWhole(t, scriptedWeek(t).reader())
	held := 0
	for i := range rec.Sessions {
		if !rec.Sessions[i].Held.IsZero() {
			held++
		}
	}
	if held == 0 {
		t.Fatal("nothing held")
	}
	gpus := *rec
	gpus.Devices = nil
	for _, d := range rec.Devices {
		if d.Name == "cuda" {
			gpus.Devices = append(gpus.Devices, d)
		}
	}
	fewer := *rec
	fewer.Devices = nil
	dropped := false
	for _, d := range rec.Devices {
		if d.Name == "cuda" && !dropped {
			dropped = true
			continue
		}
		fewer.Devices = append(fewer.Devices, d)
	}
	dis, skipped := 0, 0
	for _, r := range []*Record{rec, &gpus, &fewer} {
		m := asMaps(r)
		for i := range r.Sessions {
			if a, b := sessionLine(&r.Sessions[i]), sessionLine(&m.Sessions[i]); a != b {
				t.Fatalf("%s\n%s", a, b)
			}
		}
		parts := []Partition{r.AsItWas()}
		for _, amt := range []string{"0.1", "0.5", "1.0", "2.0"} {
			parts = append(parts, Fixed(given(r, map[model.AgentID]string{agentA: amt, agentB: amt})))
		}
		for pi, part := range parts {
			for _, o := range []Options{{Fidelity: true}, {Fidelity: true, Word: 1}, {Fidelity: true, Word: Printed}} {
				for _, k := range []int{0, 2, 3} {
					run := func(x *Record) *Result {
						if k == 0 {
							oo := o
							oo.chunkAt = -1
							return Run(x, part, oo)
						}
						oo := o
						oo.chunkAt, oo.chunks = 1, k
						return runChunked(x, part, oo, k)
					}
					a, b := run(r), run(m)
					if (a == nil) != (b == nil) {
						t.Fatalf("part %d k %d: nil differs", pi, k)
					}
					if a == nil {
						continue
					}
					dis += len(a.Disagreements)
					skipped += a.Skipped
					if x, y := disagreementsText(a.Disagreements), disagreementsText(b.Disagreements); x != y {
						t.Fatalf("part %d k %d:\n%s\n%s", pi, k, x, y)
					}
					a.Disagreements, b.Disagreements = nil, nil
					a.short, a.memoHits, b.short, b.memoHits = 0, 0, 0, 0
					if x, y := fmt.Sprintf("%+v", *a), fmt.Sprintf("%+v", *b); x != y {
						t.Fatalf("part %d k %d:\n%s\n%s", pi, k, x, y)
					}
				}
			}
			a, b := Run(r, part, Options{Fidelity: true}), Run(m, part, Options{Fidelity: true})
			da, db := NewDoc(r, a, nil), NewDoc(m, b, nil)
			ja, _ := json.MarshalIndent(da, "", "  ")
			jb, _ := json.MarshalIndent(db, "", "  ")
			if string(ja) != string(jb) {
				t.Fatalf("json differs\n%s\n%s", ja, jb)
			}
			var ta, tb strings.Builder
			da.WriteText(&ta)
			db.WriteText(&tb)
			if ta.String() != tb.String() {
				t.Fatalf("text differs")
			}
		}
	}
	if dis == 0 {
		t.Fatal("no disagreement compared")
	}
	t.Logf("%d held sessions, %d disagreements, %d skipped", held, dis, skipped)
}
