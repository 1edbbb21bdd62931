package partition

import (
	"fmt"
	"io"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// WriteText prints the verdict for an operator (fgtop check without
// --json): a refusal with its reasons, or the partition in effect, the
// drift, the notes and the files not read, and a last line that says what
// was and was not checked. Scripts read the exit class, not these words;
// the last line's "ok:" and "not ok:" are the only prefixes they match.
func (res *CheckResult) WriteText(w io.Writer) {
	cfg, snap := res.cfg, res.snap
	rep, v := &res.Report, res.Verdict
	warnings := func() {
		for _, s := range rep.Warnings {
			if v.DraftOnly() && strings.HasPrefix(s, agentconfig.DraftFormatWarning) {
				continue // the headline says it
			}
			fmt.Fprintf(w, "warning: %s\n", s)
		}
	}
	if res.Class == CheckRefused {
		fmt.Fprintf(w, "%s: %s (%d problem(s)):\n", cfg.Path, res.Headline, len(rep.Problems))
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
		if res.NodeProblems {
			fmt.Fprintf(w, "  (node: %s)\n", NodeSummary(snap))
		}
		if res.schema == SchemaDraft && v.DraftOnly() {
			for _, p := range v.MainErrors {
				fmt.Fprintf(w, "  main: %s\n", p)
			}
		}
		warnings()
		return
	}
	if v.DraftOnly() {
		fmt.Fprintf(w, "%s: %s. Judged by the unmerged BEP-1044 draft (PR #8463), as --schema bep-1044 asks; an agent running Backend.AI main refuses it at its next start:\n", cfg.Path, mainRefuses(cfg))
		for _, p := range v.MainErrors {
			fmt.Fprintf(w, "  main: %s\n", p)
		}
	}
	warnings()
	kernels := 0
	for _, k := range snap.Kernels() {
		if k.Alloc != nil {
			kernels++
		}
	}
	fmt.Fprintf(w, "%s: %s, %s; %d device(s), %d live kernel(s)\n", cfg.Path, cfg.Format, cfg.Mode, len(snap.Devices), kernels)
	rep.Partition.WriteText(w)
	if len(rep.Drift) > 0 {
		fmt.Fprintf(w, "drift (%d):\n", len(rep.Drift))
		for _, iss := range rep.Drift {
			fmt.Fprintf(w, "  %s %s: %s\n", iss.Severity, iss.Code, iss.Message)
		}
	}
	for _, iss := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", iss)
	}
	for _, iss := range rep.UnreadFiles {
		fmt.Fprintf(w, "unread: %s\n", iss)
	}
	loader := "Backend.AI main loads this file"
	if res.schema == SchemaDraft {
		loader = "the BEP-1044 draft (PR #8463) loads this file"
	}
	unseen := res.unseen
	switch {
	case res.Failing > 0:
		if unseen > 0 {
			fmt.Fprintf(w, "note: the live state was only partly checked: %d scratch root(s) missing or unreadable (see the warnings on stderr)\n", unseen)
		}
		if len(rep.UnreadFiles) > 0 {
			fmt.Fprintf(w, "note: the live state was only partly read: %s\n", UnreadSummary(rep.UnreadFiles))
		}
	case unseen > 0:
		fmt.Fprintf(w, "%s and the agent starts on this node, but the live state was not checked: %d scratch root(s) missing or unreadable (see the warnings on stderr), so the kernels under them were not seen\n", loader, unseen)
	case len(rep.UnreadFiles) > 0:
		fmt.Fprintf(w, "not ok: %s and the agent starts on this node, but the live state was not fully read: %d kernel file(s) could not be read or parsed (unread: above), so what those kernels hold is not known\n", loader, len(rep.UnreadFiles))
	case res.AccelUnchecked:
		fmt.Fprintf(w, "not ok: %s, but whether the agent starts on this node was not checked: its start-up checks on the accelerator amounts need the node's accelerators and their capacities (see the note above)\n", loader)
	case !rep.LiveChecked:
		fmt.Fprintf(w, "not ok: %s and the agent starts on this node, but what the live kernels hold of the mock plugin's accelerators was not judged: its settings were not read (see the note above)\n", loader)
	case v.DraftOnly():
		fmt.Fprintf(w, "the live state matches the config, and %s, but Backend.AI main cannot load it\n", loader)
	default:
		fmt.Fprintf(w, "ok: %s, the agent starts on this node (%s), and the live state matches the config\n", loader, NodeSummary(snap))
	}
}

// mainRefuses heads a file that only the BEP-1044 draft loads: always the
// draft's one sentence (scripts match it), and where the file is not in
// the draft's device-based form, what is true besides (main refuses it for
// another reason, listed below, that the draft's schema happens to allow).
func mainRefuses(cfg *agentconfig.Config) string {
	if cfg.IsDraftFormat() {
		return agentconfig.DraftFormatWarning
	}
	return agentconfig.DraftFormatWarning + " (only the draft's schema accepts it, though it is not in the draft's device-based form: main refuses it for its own reasons, each listed as main: ...)"
}

// NodeSummary says which node the start-up checks ran against: its cores,
// its memory, and how many devices of each other kind, in the order the
// snapshot lists them ("64 cores, 512 GiB memory, 4 cuda").
func NodeSummary(snap *model.Snapshot) string {
	cores := 0
	var other []model.DeviceName
	counted := map[model.DeviceName]int{}
	for _, d := range snap.Devices {
		switch d.Slot {
		case model.SlotCPU:
			cores++
		case model.SlotMem:
		default:
			if counted[d.Name] == 0 {
				other = append(other, d.Name)
			}
			counted[d.Name]++
		}
	}
	s := fmt.Sprintf("%d cores, %s memory", cores, model.FormatBinarySize(model.NewDec(snap.HostMemBytes, 0)))
	for _, n := range other {
		s += fmt.Sprintf(", %d %s", counted[n], n)
	}
	return s
}
