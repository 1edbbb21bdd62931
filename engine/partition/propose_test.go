package partition

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestPropose(t *testing.T) {
	const a, b = "i-gpu-node01-a", "i-gpu-node01-b"
	set := func(s string) SlotSet {
		t.Helper()
		v, err := ParseSlotSet(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name    string
		req     Request
		blind   []string
		wantErr string // CheckSlotSets' refusal
		valid   bool
		edits   bool
	}{
		{name: "a move of shares that fits", req: Request{Slots: []SlotSet{set(a + "=cuda.shares=1.5"), set(b + "=cuda.shares=2.5")}}, valid: true, edits: true},
		{name: "more shares than the node has is an invalid plan", req: Request{Slots: []SlotSet{set(a + "=cuda.shares=3.5")}}, edits: true},
		{name: "a slot the node lacks is refused before planning", req: Request{Slots: []SlotSet{set(a + "=cuda.shres=1")}}, wantErr: "did you mean cuda.shares?"},
		{name: "an unseen root is a warning", req: Request{}, blind: []string{"scratch root /s/a does not exist"}, valid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadFixture(t, "agent.multi-agent.slot-based.toml")
			p, err := Propose(cfg, snapshot(fixtureDevices()), tt.req, tt.blind)
			if tt.wantErr != "" {
				var unknown *model.UnknownSlotError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &unknown) || p != nil {
					t.Fatalf("Propose = %v, %v; want the error %q", p, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Valid() != tt.valid || p.Changed() != tt.edits {
				t.Errorf("valid %v changed %v, want %v %v (errors %q)", p.Valid(), p.Changed(), tt.valid, tt.edits, p.Errors)
			}
			for _, r := range tt.blind {
				if !slices.Contains(p.Warnings, r+": the kernels under it are not seen, so a moved device may be held") {
					t.Errorf("no warning about %s in %q", r, p.Warnings)
				}
			}
		})
	}
}

func TestUnknownSlotIn(t *testing.T) {
	cfg := loadFixture(t, "agent.multi-agent.slot-based.toml")
	snap := snapshot(fixtureDevices())
	tests := []struct {
		name     string
		settings []string
		want     string // the setting named; "" when none
		err      string
	}{
		{name: "none", settings: nil},
		{name: "known slots", settings: []string{"a=cuda.shares=1", "a=cpu=4", "a=mem=64G"}},
		{name: "an amount that does not parse is not a slot's fault", settings: []string{"a=cuda.shares=lots"}},
		{name: "a typo of a slot, whatever its amount", settings: []string{"a=cpu=4", "a=memory=64G", "a=cuda.shres=1"}, want: "a=memory=64G", err: "did you mean mem? (the node's slots: cpu, cuda.shares, mem)"},
		{name: "no slot at all is left to ParseSlotSet", settings: []string{"a=", "a==1", "a"}},
		{name: "spaces around the slot", settings: []string{"a= cuda.shres =1"}, want: "a= cuda.shres =1", err: "did you mean cuda.shares?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UnknownSlotIn(tt.settings, cfg, snap)
			if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("UnknownSlotIn = %q, %v; want %q and an error with %q", got, err, tt.want, tt.err)
			}
		})
	}
}
