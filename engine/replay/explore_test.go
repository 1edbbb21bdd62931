package replay

import (
	"testing"
	"time"
)

func TestExplore(t *testing.T) {
	w := newWeek(t, "2.0", "2.0")
	w.start(time.Hour, agentA, 1, share(0, "0.5"))
	w.start(2*time.Hour, agentB, 2, share(1, "0.6"), share(2, "0.6"))
	w.stop(3*time.Hour, agentA, 1)
	rd := w.reader()
	rec, err := Load(rd, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rec.Devices {
		t.Logf("dev %s %s %s cap %s", d.Name, d.ID, d.Slot, d.Capacity)
		if d.Name == "cpu" {
			break
		}
	}
	t.Logf("epochs %+v settings %+v", rec.Epochs, rec.Settings)
	for _, s := range rec.Sessions {
		t.Logf("session %+v", s)
	}
	res := Run(rec, rec.AsItWas(), Options{Fidelity: true})
	t.Logf("res %+v", res)
}
