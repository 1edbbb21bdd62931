package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// WriteText says what the suggestion found, as the --slot flags that plan
// it (flags, Flags' answer; none: no change): the slots it kept at
// today's amounts and why, whether every session starts under the
// amounts, and why a raise over an overheld amount is to be weighed. It
// ends with an empty line, before the plan or the replay.
func (sg *Suggestion) WriteText(w io.Writer, flags []string) {
	if len(sg.Kept) > 0 {
		fmt.Fprintf(w, "suggested: %s kept at today's amounts: the record lists no devices of them (made without the host's), so it cannot tell their demand\n", joinSlots(sg.Kept))
	}
	if len(sg.Empty) > 0 {
		fmt.Fprintf(w, "suggested: %s kept at today's amounts: the node as given leaves none of it after the config's reserved amounts (plan off the node sizes this machine: give --host-cpus and --host-mem as the node has them)\n", joinSlots(sg.Empty))
	}
	if len(sg.Unsized) > 0 {
		fmt.Fprintf(w, "suggested: %s kept at today's amounts: the node's devices of them are not listed (give them with --devices), so no amount can be sized against the node\n", joinSlots(sg.Unsized))
	}
	switch {
	case sg.AllServed && len(flags) == 0:
		fmt.Fprint(w, "suggested: no change: today's amounts already start every recorded session\n\n")
		return
	case len(flags) == 0:
		fmt.Fprintf(w, "suggested: no change: no amounts within the node start every recorded session (%s), and none refuse fewer than today's %d\n\n", sg.Wanting(), len(sg.Result.Refused))
		return
	case sg.AllServed:
		fmt.Fprintln(w, "suggested: every recorded session starts under these amounts (the nearest to today's file):")
	default:
		fmt.Fprintf(w, "suggested: no amounts within the node start every recorded session (%s); these refuse the fewest, %d, with no agent given more than it ever used while another is refused:\n", sg.Wanting(), len(sg.Result.Refused))
	}
	var sb strings.Builder
	for _, f := range flags {
		sb.WriteString(" --slot " + f)
	}
	fmt.Fprintf(w, " %s\n", strings.TrimSpace(sb.String()))
	if why := sg.OverheldWords(); why != "" {
		fmt.Fprintf(w, "suggested: weigh the raise before applying it: %s\n", why)
	}
	fmt.Fprintln(w)
}

// joinSlots is "cpu and mem", "a, b and c".
func joinSlots(ss []model.SlotName) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// SetSuggestion puts what --suggest found into the document: its
// amounts as written (2.0 stays 2.0), the slots it kept and why, and the
// words on an overheld raise.
func (d *Doc) SetSuggestion(sg *Suggestion) {
	d.Suggested = map[model.AgentID]map[model.SlotName]string{}
	for id, amts := range sg.Amounts {
		d.Suggested[id] = map[model.SlotName]string{}
		for s, v := range amts {
			d.Suggested[id][s] = v.String()
		}
	}
	d.SuggestedKept = sg.Kept
	d.SuggestedUnsized = sg.Unsized
	d.SuggestedEmpty = sg.Empty
	d.SuggestedOverheld = sg.OverheldWords()
}

// Shortfall says what a replay of the record found wanting, "" when
// every session starts: under the partitions in force with no proposal
// (the rules refusing sessions the record saw run: the replay's
// fidelity, not the node's), or under the proposal.
func (d *Doc) Shortfall() string {
	if d.ServesAll {
		return ""
	}
	if !d.Proposal && !d.Arrivals {
		return fmt.Sprintf("the rules would have refused %d of the %d recorded session(s) under the partition in force, though they ran", d.RefusedCount(), d.Sessions)
	}
	return fmt.Sprintf("%d of %d recorded session(s) would not have started", d.RefusedCount(), d.Sessions)
}
