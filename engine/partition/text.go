package partition

import (
	"fmt"
	"io"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// WriteText prints the plan for an operator: moves with the live kernels
// they affect, per-agent gains and losses, what stays, the file edits, and
// every error, warning and note.
func (p *Plan) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	mode := p.ModeFrom
	if p.ModeTo != p.ModeFrom {
		mode = p.ModeFrom + " -> " + p.ModeTo
	}
	fmt.Fprintf(b, "plan for %s (%s, %s)\n", p.Config, p.Format, mode)

	if len(p.Moves) > 0 {
		fmt.Fprintf(b, "\ndevices changing owner (%d):\n", len(p.Moves))
		for _, g := range groupMoves(p.Moves) {
			m := g.first
			state := "free"
			if len(m.Holders) > 0 {
				state = fmt.Sprintf("held by %d live kernel(s)", countKernels(m.Holders))
			}
			fmt.Fprintf(b, "  %s: %s -> %s  [%s]\n", g.label, owners(p.Current, m.From), owners(p.Next, m.To), state)
			for _, h := range m.Holders {
				mark := ""
				if h.Stranded {
					mark = "  <- its agent no longer owns the device"
				}
				fmt.Fprintf(b, "      kernel %s (agent %s): %s %s%s\n", h.Kernel, h.Agent, amount(h.Slot, h.Amount), h.Slot, mark)
			}
		}
	}
	var agentLines []string
	for _, a := range p.Agents {
		var parts []string
		if len(a.Gains) > 0 {
			parts = append(parts, "gains "+compressKeys(a.Gains))
		}
		if len(a.Losses) > 0 {
			parts = append(parts, "loses "+compressKeys(a.Losses))
		}
		if !a.MemFrom.Equal(a.MemTo) {
			parts = append(parts, fmt.Sprintf("mem %s -> %s", memText(a.MemFrom), memText(a.MemTo)))
		}
		if p.Format == agentconfig.FormatSlotBased {
			for _, c := range a.Capacity {
				if c.Slot == model.SlotMem {
					continue
				}
				parts = append(parts, fmt.Sprintf("%s capacity %s -> %s", c.Slot, amount(c.Slot, c.From), amount(c.Slot, c.To)))
			}
		}
		if len(parts) > 0 {
			agentLines = append(agentLines, fmt.Sprintf("  %s: %s", a.Agent, strings.Join(parts, "; ")))
		}
	}
	if len(agentLines) > 0 {
		fmt.Fprintf(b, "\nagents:\n%s\n", strings.Join(agentLines, "\n"))
	}
	if len(p.Strained) > 0 {
		fmt.Fprintf(b, "\nlive kernels above the new capacity:\n")
		for _, s := range p.Strained {
			fmt.Fprintf(b, "  agent %s holds %s %s, planned capacity %s%s\n", s.Agent, amount(s.Slot, s.Held), s.Slot, amount(s.Slot, s.Capacity), s.ifTheirs())
		}
	}
	if len(p.Unchanged) > 0 {
		fmt.Fprintf(b, "\nunchanged:\n")
		for _, u := range p.Unchanged {
			fmt.Fprintf(b, "  %s\n", u)
		}
	}
	if len(p.Edits) > 0 {
		fmt.Fprintf(b, "\nfile changes (%d; every other byte stays as it is):\n", len(p.Edits))
		for _, e := range p.Edits {
			fmt.Fprintf(b, "  line %d, %s:\n", e.Line, e.Key)
			for _, l := range editLines(e.Old) {
				fmt.Fprintf(b, "    - %s\n", l)
			}
			for _, l := range editLines(e.New) {
				fmt.Fprintf(b, "    + %s\n", l)
			}
		}
	}
	const maxUnreadListed = 5
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(b, "\n%s (%d):\n", title, len(lines))
		for _, l := range lines {
			fmt.Fprintf(b, "  %s\n", strings.ReplaceAll(l, "\n", "\n  "))
		}
	}
	section("errors", p.Errors)
	section("warnings", p.Warnings)
	section("notes", p.Notes)
	if p.Valid() && p.Changed() {
		section("not checked on this node", p.Unchecked())
		// Which files, as check names them: the operator looks at them
		// before deciding on --force.
		if len(p.Unread) > 0 {
			fmt.Fprintf(b, "\nunread (%d):\n", len(p.Unread))
			for i, l := range p.Unread {
				if i == maxUnreadListed {
					fmt.Fprintf(b, "  and %d more\n", len(p.Unread)-i)
					break
				}
				fmt.Fprintf(b, "  %s\n", l)
			}
		}
	}
	switch {
	case !p.Valid():
		fmt.Fprintf(b, "\nINVALID: %d error(s); nothing can be applied\n", len(p.Errors))
	case !p.Changed():
		fmt.Fprintf(b, "\nno change\n")
	case len(p.Affected()) > 0:
		fmt.Fprintf(b, "\nvalid, %d file change(s); live kernels are affected: apply needs --force\n", len(p.Edits))
	case len(p.Unchecked()) > 0:
		fmt.Fprintf(b, "\nvalid as far as it was checked, %d file change(s) (not checked: above): apply needs --force\n", len(p.Edits))
	default:
		fmt.Fprintf(b, "\nvalid, %d file change(s)\n", len(p.Edits))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// memText shows an agent's mem; zero means memory is not partitioned.
func memText(d model.Dec) string {
	if d.IsZero() {
		return "not partitioned"
	}
	return model.FormatBinarySize(d)
}

type moveGroup struct {
	label string
	first DeviceMove
}

// groupMoves folds free moves of the same plugin between the same owners
// into one line ("cpu:0-15"), so a mode switch does not print 32 cores.
func groupMoves(ms []DeviceMove) []moveGroup {
	var out []moveGroup
	for i := 0; i < len(ms); {
		m := ms[i]
		j := i + 1
		ids := []model.DeviceID{m.Key.ID}
		for len(m.Holders) == 0 && j < len(ms) && len(ms[j].Holders) == 0 && ms[j].Key.Name == m.Key.Name &&
			sameAgents(ms[j].From, m.From) && sameAgents(ms[j].To, m.To) {
			ids = append(ids, ms[j].Key.ID)
			j++
		}
		label := m.Device
		if len(ids) > 1 {
			label = fmt.Sprintf("%s:%s", m.Key.Name, IDRanges(ids))
		}
		out = append(out, moveGroup{label: label, first: m})
		i = j
	}
	return out
}

func sameAgents(a, b []model.AgentID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// compressKeys writes "cpu:16", "cpu:17", "cuda:x" as "cpu 16-17, cuda x".
func compressKeys(keys []string) string {
	var names []model.DeviceName
	ids := map[model.DeviceName][]model.DeviceID{}
	for _, s := range keys {
		k, ok := ParseKey(s)
		if !ok {
			continue
		}
		if _, seen := ids[k.Name]; !seen {
			names = append(names, k.Name)
		}
		ids[k.Name] = append(ids[k.Name], k.ID)
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %s", n, IDRanges(ids[n]))
	}
	return strings.Join(parts, "; ")
}

func countKernels(hs []Holder) int {
	seen := map[model.KernelID]bool{}
	for _, h := range hs {
		seen[h.Kernel] = true
	}
	return len(seen)
}

// owners names a device's owners: "all agents" when every agent of a
// non-exclusive partition has it.
func owners(p *Partition, ids []model.AgentID) string {
	if len(ids) == 0 {
		return "no agent"
	}
	if p != nil && !p.Exclusive && len(ids) == len(p.Agents) && len(ids) > 1 {
		return "all agents"
	}
	return joinAgents(ids)
}

// editLines splits an edit's text into lines for display, without the
// final newline.
func editLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimRight(s, "\r\n"), "\n")
}

// WriteText prints the partition: format, mode, and per agent its devices
// (or capacities) and memory.
func (p *Partition) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	excl := "devices not exclusive"
	if p.Exclusive {
		excl = "exclusive devices"
	}
	mode := p.Mode
	if p.Effective != p.Mode {
		mode = fmt.Sprintf("%s (in effect: %s, one agent)", p.Mode, p.Effective)
	}
	fmt.Fprintf(b, "partition: %s, %s, %s\n", p.Format, mode, excl)
	for _, a := range p.Agents {
		var parts []string
		if a.Owns != nil {
			names := make([]model.DeviceName, 0, len(a.Owns))
			for n := range a.Owns {
				names = append(names, n)
			}
			agentconfig.SortNatural(names)
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %s", n, IDRanges(a.Owns[n])))
			}
		} else {
			parts = append(parts, "every device")
		}
		if p.Format == agentconfig.FormatSlotBased && p.Mode != agentconfig.ModeShared {
			for _, s := range a.Capacity.Names() {
				if s == model.SlotMem {
					continue
				}
				parts = append(parts, fmt.Sprintf("%s %s", s, amount(s, a.Capacity[s])))
			}
		}
		if !a.Mem.IsZero() {
			parts = append(parts, "mem "+model.FormatBinarySize(a.Mem))
		}
		fmt.Fprintf(b, "  %s: %s\n", a.ID, strings.Join(parts, "; "))
	}
	// One line per device kind, in the ranges the config itself is
	// written in ("cpu 32-63"), however many there are.
	var kinds []model.DeviceName
	unowned := map[model.DeviceName][]model.DeviceID{}
	for _, k := range p.Unowned {
		if _, ok := unowned[k.Name]; !ok {
			kinds = append(kinds, k.Name)
		}
		unowned[k.Name] = append(unowned[k.Name], k.ID)
	}
	for _, n := range kinds {
		fmt.Fprintf(b, "  (no agent): %s %s\n", n, IDRanges(unowned[n]))
	}
	for _, n := range p.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
