package model

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckSlot(t *testing.T) {
	known := []SlotName{"mem", "cuda.shares", "cpu", "cpu"}
	for _, c := range []struct {
		slot    SlotName
		ok      bool
		suggest SlotName
	}{
		{"cuda.shares", true, ""},
		{"cpu", true, ""},
		{"cuda.shres", false, "cuda.shares"},
		{"cuda.sahres", false, "cuda.shares"},
		{"CUDA.SHARES", false, "cuda.shares"},
		{"cuda.device", false, ""},
		{"mme", false, "mem"},
		// One name begins the other: the slot the operator meant.
		{"memory", false, "mem"},
		{"cuda", false, "cuda.shares"},
		{"rocm.device", false, ""},
		{"", false, ""},
	} {
		err := CheckSlot(c.slot, known)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.slot, err, c.ok)
			continue
		}
		if err == nil {
			continue
		}
		var ue *UnknownSlotError
		if !errors.As(err, &ue) {
			t.Fatalf("%q: %T", c.slot, err)
		}
		if ue.Suggest != c.suggest {
			t.Errorf("%q: suggests %q, want %q", c.slot, ue.Suggest, c.suggest)
		}
		msg := err.Error()
		if !strings.Contains(msg, "(the node's slots: cpu, cuda.shares, mem)") {
			t.Errorf("%q: %s", c.slot, msg)
		}
		if c.suggest != "" && !strings.Contains(msg, "did you mean "+string(c.suggest)+"?") {
			t.Errorf("%q: %s", c.slot, msg)
		}
	}
}

func FuzzCheckSlot(f *testing.F) {
	f.Add("cuda.shres")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		err := CheckSlot(SlotName(s), []SlotName{"cpu", "mem", "cuda.shares", "cuda.device"})
		if err != nil && !strings.Contains(err.Error(), "unknown slot") {
			t.Fatal(err)
		}
	})
}

// TestClosest: the one "did you mean" of slots, agent.toml keys and the
// console's commands suggests a name only for a typo of it.
func TestClosest(t *testing.T) {
	keys := []string{"reserved-cpu", "reserved-mem", "allocation-mode", "allocation_mode", "allocations", "affinity-policy"}
	cmds := []string{"sort", "filter", "dev", "fit", "at", "live", "span", "help", "q", "quit"}
	for _, c := range []struct {
		s     string
		known []string
		want  string
	}{
		{"allocaton-mode", keys, "allocation-mode"},
		{"allocaton_mode", keys, "allocation_mode"},
		{"ALLOCATION-MODE", keys, "allocation-mode"},
		{"reserved-gpu", keys, "reserved-cpu"},
		{"devises", []string{"cpu", "mem", "devices"}, "devices"},
		{"gpu-count", keys, ""},
		{"fitt", cmds, "fit"},
		{"flter", cmds, "filter"},
		{"helpp", cmds, "help"},
		{"qq", cmds, "q"},
		// A one-letter word all of whose letters are wrong is not a typo.
		{"x", cmds, ""},
		{"w", cmds, ""},
		{"nosuch", cmds, ""},
		{"", cmds, ""},
		{"fit", nil, ""},
		// Two names as near, or two that begin alike: no answer, not the
		// first in sorted order.
		{"i-gpu-node01-numa2", []string{"i-gpu-node01-numa0", "i-gpu-node01-numa1"}, ""},
		{"i-gpu-node01", []string{"i-gpu-node01-numa0", "i-gpu-node01-numa1"}, ""},
		{"i-gpu-node01-numa", []string{"i-gpu-node01-numa0", "i-gpu-node01-numa1"}, ""},
		{"i-gpu-node01-numo1", []string{"i-gpu-node01-numa0", "i-gpu-node01-numa1"}, "i-gpu-node01-numa1"},
		{"cuda", []string{"cuda.device", "cuda.shares"}, ""},
		{"memory", []string{"cpu", "mem"}, "mem"},
	} {
		if got := Closest(c.s, c.known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}
