package partition

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Plan is what applying a draft would do: the file edits, who gains and
// loses what, which devices change owner and which live kernels still hold
// them, what stays as it is, and every reason the draft is invalid.
//
// In its JSON (plan --json) a list the plan always computes is present,
// [] when empty, so that a script tells "none" from "not computed"; a
// member is absent only where it was not computed: new_hash and edits
// when the draft could not be rendered, unread when the node was not read.
type Plan struct {
	Config string `json:"config"`
	// BaseHash is the hash of the file the plan was made on.
	BaseHash string             `json:"base_hash"`
	NewHash  string             `json:"new_hash,omitempty"`
	Format   agentconfig.Format `json:"format"`
	// DraftFormat says the file is, or would be, in the BEP-1044
	// device-based form, which Backend.AI main cannot load
	// (agentconfig.DraftFormatWarning is among the Warnings then).
	DraftFormat bool `json:"draft_format"`
	// JudgedBy is whose loader's verdict makes the plan valid or not:
	// "main" (Backend.AI main's, what an agent started today runs) unless
	// the draft is written in the BEP-1044 device-based form the operator
	// chose, then "bep-1044" (the draft's, PR #8463), as `check --schema`.
	// LoadsOnMain and LoadsOnDraft are both loaders' verdicts on the file
	// as it would be written.
	JudgedBy     string `json:"judged_by"`
	LoadsOnMain  bool   `json:"loads_on_main"`
	LoadsOnDraft bool   `json:"loads_on_bep1044_draft"`
	ModeFrom     string `json:"mode_from"`
	ModeTo       string `json:"mode_to"`
	// Agents says per agent what it gains and loses.
	Agents []AgentDelta `json:"agents"`
	// Moves are the devices whose owners change.
	Moves []DeviceMove `json:"moves"`
	// Strained are slot-based agents whose kernels hold more than their new
	// capacity.
	Strained []Strain `json:"strained"`
	// Unchanged says, in words, what stays as it is.
	Unchanged []string `json:"unchanged"`
	// Edits are the file changes; nil when the draft could not be
	// rendered.
	Edits []agentconfig.Change `json:"edits,omitzero"`
	// Errors make the plan invalid; Warnings and Notes do not.
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
	Notes    []string `json:"notes"`
	// AccelUnchecked: the node's accelerators or their capacities are
	// unknown, so the agent's start-up checks on a manual partition's
	// accelerator amounts (check's "not ok") were not run.
	AccelUnchecked bool `json:"accel_unchecked"`
	// settingsDiffer: AccelUnchecked because the agents' CUDA plugin
	// settings register the GPUs differently, not because the
	// accelerators are unknown.
	settingsDiffer bool
	// mockGuessed: AccelUnchecked because the mock plugin's settings
	// were not read from the agent's etcd.
	mockGuessed bool
	// Unread are the kernel files that could not be read or parsed (the
	// file and why): what those kernels hold is not known. nil when the
	// node was not read.
	Unread []string `json:"unread,omitzero"`

	// Current and Next are the effective partitions before and after.
	Current *Partition `json:"-"`
	Next    *Partition `json:"-"`
	// NewRaw is the file as it would be written.
	NewRaw []byte `json:"-"`

	inv    Inventory
	assume agentconfig.Format
}

// AgentDelta is one agent's change.
type AgentDelta struct {
	Agent  model.AgentID `json:"agent"`
	Gains  []string      `json:"gains"`
	Losses []string      `json:"losses"`
	// MemFrom and MemTo are its memory before and after (bytes).
	MemFrom model.Dec `json:"mem_from"`
	MemTo   model.Dec `json:"mem_to"`
	// Capacity lists the slots whose capacity changes.
	Capacity []SlotChange `json:"capacity"`
}

// SlotChange is a capacity before and after.
type SlotChange struct {
	Slot model.SlotName `json:"slot"`
	From model.Dec      `json:"from"`
	To   model.Dec      `json:"to"`
}

// DeviceMove is a device whose owners change.
type DeviceMove struct {
	Device string          `json:"device"`
	Key    model.DeviceKey `json:"-"`
	From   []model.AgentID `json:"from"`
	To     []model.AgentID `json:"to"`
	// Holders are the live kernels holding the device; Stranded says which
	// of them belong to an agent that will not own it.
	Holders []Holder `json:"holders"`
}

// Holder is one kernel's hold on a device.
type Holder struct {
	Kernel   model.KernelID `json:"kernel"`
	Agent    model.AgentID  `json:"agent"`
	Slot     model.SlotName `json:"slot"`
	Amount   model.Dec      `json:"amount"`
	Stranded bool           `json:"stranded"`
}

// Strain is a slot-based agent holding more than its planned capacity.
type Strain struct {
	Agent    model.AgentID  `json:"agent"`
	Slot     model.SlotName `json:"slot"`
	Held     model.Dec      `json:"held"`
	Capacity model.Dec      `json:"capacity"`
	// Unattributed, when set, are live kernels whose agent cannot be told
	// (no usable recovery.json in a scratch root several agents share, or
	// one that names an agent the file does not list): Held counts them,
	// and the strain is real if they are this agent's.
	Unattributed []model.KernelID `json:"unattributed"`
}

// words is the strain as Affected says it.
func (s Strain) words() string {
	return fmt.Sprintf("agent %s's kernels hold %s %s, more than its planned %s%s", s.Agent, amount(s.Slot, s.Held), s.Slot, amount(s.Slot, s.Capacity), s.ifTheirs())
}

// ifTheirs is the condition of a strain that counts kernels whose agent
// cannot be told, "" for one that does not.
func (s Strain) ifTheirs() string {
	switch len(s.Unattributed) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" if kernel %s is its (its agent cannot be told)", s.Unattributed[0])
	}
	ids := make([]string, len(s.Unattributed))
	for i, id := range s.Unattributed {
		ids[i] = string(id)
	}
	return fmt.Sprintf(" if kernels %s are its (their agent cannot be told)", strings.Join(ids, ", "))
}

// Valid reports whether the plan has no errors.
func (p *Plan) Valid() bool { return len(p.Errors) == 0 }

// Changed reports whether applying the plan would change the file.
func (p *Plan) Changed() bool { return len(p.Edits) > 0 }

// Affected returns the live kernels the plan would leave on devices their
// agent no longer owns (or above their agent's capacity), one line each.
// Applying such a plan needs force.
func (p *Plan) Affected() []string {
	var out []string
	for _, m := range p.Moves {
		for _, h := range m.Holders {
			if h.Stranded {
				out = append(out, fmt.Sprintf("kernel %s of agent %s holds %s %s on %s, which moves to %s",
					h.Kernel, h.Agent, amount(h.Slot, h.Amount), h.Slot, m.Device, agentsOrNone(m.To)))
			}
		}
	}
	for _, s := range p.Strained {
		out = append(out, s.words())
	}
	return out
}

// Unconfirmed returns what applying the plan now would affect, against a
// newer snapshot, beyond what confirmed covers: kernels that started
// holding a moving device (or pushed an agent over its planned capacity)
// after the plan was made. confirmed is false when nobody confirmed the
// plan's own list (no force): then everything affected now is returned.
// A force confirms the kernels the operator was shown, not ones that came
// later.
func (p *Plan) Unconfirmed(snap *model.Snapshot, confirmed bool) []string {
	q := *p
	q.Agents, q.Moves, q.Strained, q.Unchanged = nil, nil, nil, nil
	q.compare(snap)
	shown := map[string]bool{}
	if confirmed {
		for k := range p.affectedKeys() {
			shown[k] = true
		}
	}
	var out []string
	for k, line := range q.affectedKeys() {
		if !shown[k] {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// affectedKeys maps each affected hold (kernel on device, or strained
// agent and slot) to its Affected line.
func (p *Plan) affectedKeys() map[string]string {
	out := map[string]string{}
	lines := p.Affected()
	i := 0
	for _, m := range p.Moves {
		for _, h := range m.Holders {
			if h.Stranded {
				out["k\x00"+string(h.Kernel)+"\x00"+m.Device] = lines[i]
				i++
			}
		}
	}
	for _, st := range p.Strained {
		out["s\x00"+string(st.Agent)+"\x00"+string(st.Slot)] = lines[i]
		i++
	}
	return out
}

func agentsOrNone(ids []model.AgentID) string {
	if len(ids) == 0 {
		return "no agent"
	}
	return joinAgents(ids)
}

// Build plans the change from cur to draft on the node in snap. It is
// pure: it renders the draft into the bytes that would be written, reads
// them back, validates them with the agent's rules (load time, and
// allocator start against the snapshot's devices) and compares the
// effective partitions before and after. Draft-construction errors (from
// Draft) can be passed in extra and are listed first.
func Build(cur, draft *agentconfig.Config, snap *model.Snapshot, extra ...string) *Plan {
	inv := InventoryOf(snap)
	p := &Plan{Config: cur.Path, BaseHash: cur.Hash, Format: draft.AllocFormat, ModeFrom: cur.Mode, ModeTo: draft.Mode,
		inv: inv, assume: draft.AllocFormat}
	p.JudgedBy = JudgeMain
	if p.Format == agentconfig.FormatDeviceBased {
		p.JudgedBy = JudgeDraft
	}
	p.Errors = append(p.Errors, extra...)
	for _, pr := range cur.Problems {
		p.Warnings = append(p.Warnings, "the current config breaks a rule: "+pr.String())
	}
	p.Current = Effective(cur, inv)

	raw, edits, err := agentconfig.Render(cur, draft)
	rendered := err == nil
	next := draft
	if err != nil {
		p.Errors = append(p.Errors, err.Error())
	} else {
		p.NewRaw, p.Edits, p.NewHash = raw, edits, agentconfig.HashOf(raw)
		n, probs, perr := agentconfig.ValidateRendered(cur.Path, raw, draft.AllocFormat)
		if n == nil {
			p.Errors = append(p.Errors, fmt.Sprintf("the edited file would not load: %v", perr))
		} else {
			next = n
			for _, pr := range probs {
				p.Errors = append(p.Errors, pr.String())
			}
			if !n.IsDraftFormat() {
				// No device-based tables are written (auto-split, shared):
				// main's loader judges what main can load.
				p.JudgedBy = JudgeMain
			}
			p.judge(n.Verdict)
		}
	}
	if cur.IsDraftFormat() || next.IsDraftFormat() {
		p.DraftFormat = true
		// First, so nobody misses it.
		p.Warnings = append([]string{draftFormatLine(cur, next)}, p.Warnings...)
	}
	if cur.FormatGuessed && next.Mode == agentconfig.ModeManual && cur.Mode != agentconfig.ModeManual {
		p.Notes = append(p.Notes, manualStartNote(next.AllocFormat))
	}
	for _, pr := range next.ValidateWith(inv.Devices, inv.ValidateOptions()) {
		p.Errors = append(p.Errors, pr.String())
	}
	if inv.AcceleratorsUnknown && len(inv.Devices) > 0 {
		p.Warnings = append(p.Warnings, inv.UnknownNote())
	}
	p.Next = Effective(next, inv)
	p.Notes = append(p.Notes, p.Next.Notes...)
	if iss := MemBeyondHost(p.Next); iss != nil {
		p.Warnings = append(p.Warnings, iss.Message)
	}
	if iss := CPUBeyondHost(p.Next); iss != nil {
		p.Warnings = append(p.Warnings, iss.Message)
	}
	if len(inv.Devices) == 0 {
		p.Warnings = append(p.Warnings, "no device inventory: device names and IDs are not checked")
	}
	p.compare(snap)
	// As check judges a file: a manual partition's accelerator amounts are
	// checked at the agent's start against the accelerators, and kernels
	// whose files were not read hold what cannot be seen.
	p.AccelUnchecked = inv.AcceleratorsUnknown && next.Mode == agentconfig.ModeManual && givesAccelerators(next) && p.accelChanged()
	p.settingsDiffer = inv.Plugin != nil && inv.Plugin.SettingsDiffer && len(inv.Devices) > 0
	p.mockGuessed = mockGuessed(inv.Source)
	p.Unread = unreadKernels(snap)
	if p.Changed() {
		p.Notes = append(p.Notes, "the agent reads agent.toml only at start-up: restart it after applying (apply --restart-cmd CMD runs a command for that)")
	}
	p.present(rendered, snap != nil)
	return p
}

// present makes the lists Build always computes empty rather than nil, so
// that plan --json says none ([]) where there are none; rendered says the
// edits were computed, read that the node's kernels were.
func (p *Plan) present(rendered, read bool) {
	p.Agents, p.Moves, p.Strained, p.Unchanged = orEmpty(p.Agents), orEmpty(p.Moves), orEmpty(p.Strained), orEmpty(p.Unchanged)
	p.Errors, p.Warnings, p.Notes = orEmpty(p.Errors), orEmpty(p.Warnings), orEmpty(p.Notes)
	if rendered {
		p.Edits = orEmpty(p.Edits)
	}
	if read {
		p.Unread = orEmpty(p.Unread)
	}
	for i := range p.Agents {
		a := &p.Agents[i]
		a.Gains, a.Losses, a.Capacity = orEmpty(a.Gains), orEmpty(a.Losses), orEmpty(a.Capacity)
	}
	for i := range p.Moves {
		m := &p.Moves[i]
		m.From, m.To, m.Holders = orEmpty(m.From), orEmpty(m.To), orEmpty(m.Holders)
	}
	for i := range p.Strained {
		p.Strained[i].Unattributed = orEmpty(p.Strained[i].Unattributed)
	}
}

// orEmpty is s, or an empty slice where s is nil.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// unreadKernels are the kernel files snap could not read or parse, one
// line each: what those kernels hold is not known.
func unreadKernels(snap *model.Snapshot) []string {
	if snap == nil {
		return nil
	}
	var out []string
	for _, iss := range snap.Issues {
		if !holdingUnknown(snap, iss) {
			continue
		}
		w := iss.Message
		if iss.File != "" {
			w = iss.File + ": " + w
		}
		out = append(out, w)
	}
	return out
}

// holdingUnknown reports whether iss, of snap, leaves what a kernel holds
// unknown: its file could not be read or parsed, torn ones included (plan,
// apply and check read the node once: a file cut mid-line is what they
// judge by, whether or not it would settle), or it parses but lists none
// of what it asks for (cut at a line's end). A kernel the live engine
// keeps at its last good allocation (stale) while its file is being
// written (a warning: torn, or cut short) is known by that, as the
// console's editor always took it; one whose file is wrong (an error) is
// not.
func holdingUnknown(snap *model.Snapshot, iss model.Issue) bool {
	switch iss.Code {
	case model.IssueParse, model.IssuePermission, model.IssueSymlinkEscape, model.IssueNoAllocation:
		if iss.Kernel != "" && iss.Severity < model.SevError {
			if k := snap.Kernel(iss.Kernel); k != nil && k.State == model.KernelStale {
				return false
			}
		}
		return true
	}
	return false
}

// accelChanged reports whether the plan changes what the agents are given
// of an accelerator: an amount of a slot other than cpu and mem, a device
// other than a core that moves, or the mode (a file that comes to give
// amounts).
func (p *Plan) accelChanged() bool {
	if p.ModeFrom != p.ModeTo {
		return true
	}
	for _, a := range p.Agents {
		for _, c := range a.Capacity {
			if c.Slot != model.SlotCPU && c.Slot != model.SlotMem {
				return true
			}
		}
	}
	for _, m := range p.Moves {
		if m.Key.Name != "cpu" && m.Key.Name != "mem" {
			return true
		}
	}
	return false
}

// Unchecked says what about the plan could not be checked on this node,
// one line each (none: everything was): apply needs force to write a plan
// that changes something while any is left.
func (p *Plan) Unchecked() []string {
	var out []string
	switch {
	case p.AccelUnchecked && p.settingsDiffer:
		out = append(out, "the agent's start-up checks on the accelerator amounts were not run: the agents' CUDA plugin settings differ (node scopes in etcd), so each registers the GPUs its own way (give the agents the same settings)")
	case p.AccelUnchecked && p.mockGuessed:
		out = append(out, "the agent's start-up checks on the accelerator amounts were not run: "+mockUnreadWords+" ("+MockSettingsHint+")")
	case p.AccelUnchecked:
		out = append(out, "the agent's start-up checks on the accelerator amounts were not run: the node's accelerators or their capacities are unknown (pass --devices, --fgpu-capacity or --plugin-config)")
	}
	if n := len(p.Unread); n > 0 {
		out = append(out, fmt.Sprintf("%d kernel file(s) could not be read or parsed, so what those kernels hold is not known", n))
	}
	return out
}

// Judged-by names: check's --schema values.
const (
	JudgeMain  = "main"
	JudgeDraft = "bep-1044"
)

// judge makes the verdict of the loader the plan is judged by the one that
// counts. A file's problems are those of either loader that takes it, so
// a file only the other loader takes has none: the judging loader's
// reasons are added then.
func (p *Plan) judge(v *agentconfig.Verdict) {
	if v == nil {
		return
	}
	p.LoadsOnMain, p.LoadsOnDraft = v.Main, v.Draft
	switch {
	case p.JudgedBy == JudgeMain && !v.Main && v.Draft:
		for _, pr := range v.MainErrors {
			p.Errors = append(p.Errors, "Backend.AI main's loader refuses the edited file: "+pr.String())
		}
	case p.JudgedBy == JudgeDraft && !v.Draft && v.Main:
		for _, pr := range v.DraftErrors {
			p.Errors = append(p.Errors, "the BEP-1044 draft's loader (PR #8463) refuses the edited file: "+pr.String())
		}
	}
}

// JudgeLabel names, in words, the loader whose verdict the plan follows.
func (p *Plan) JudgeLabel() string {
	if p.JudgedBy == JudgeDraft {
		return "the BEP-1044 draft's loader (PR #8463)"
	}
	return "Backend.AI main's loader"
}

// draftFormatLine is the plan's warning about the BEP-1044 form: the
// shared sentence, and whether the file is in that form or is being put
// into it.
func draftFormatLine(cur, next *agentconfig.Config) string {
	switch {
	case !cur.IsDraftFormat():
		return agentconfig.DraftFormatWarning + " (this plan writes the BEP-1044 device-based form because --format device-based asks for it; without it fgtop writes main's slot-based form)"
	case !next.IsDraftFormat():
		return agentconfig.DraftFormatWarning + " (as it is now; after this plan it has no allocation tables, which main loads)"
	}
	return agentconfig.DraftFormatWarning + " (the file is in the BEP-1044 device-based form, and this plan keeps it)"
}

// manualStartNote says what the agents get when manual mode starts from a
// file without allocation tables.
func manualStartNote(f agentconfig.Format) string {
	if f == agentconfig.FormatDeviceBased {
		return "manual starts from the auto-split deal, in the BEP-1044 device-based form (--format device-based): each agent lists the cores and devices auto-split gives it, and an even share of the memory"
	}
	return "manual starts from an even split, in Backend.AI main's slot-based form: each agent gets cpu, mem and every plugin slot (devices) as auto-split divides them (fractional shares rounded down to 0.01), so it starts and reports the same capacity; --cpu and --mem change it"
}

// compare fills Agents, Moves, Strained and Unchanged from Current and
// Next.
func (p *Plan) compare(snap *model.Snapshot) {
	cur, next := p.Current, p.Next
	// Every device either partition or the node knows, but mem (split by
	// amount).
	var keys []model.DeviceKey
	seen := map[model.DeviceKey]bool{}
	addKey := func(k model.DeviceKey) {
		if k.Name != "mem" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, d := range p.inv.Devices {
		addKey(d.Key())
	}
	for _, part := range []*Partition{cur, next} {
		for _, a := range part.Agents {
			for n, ids := range a.Owns {
				for _, id := range ids {
					addKey(model.DeviceKey{Name: n, ID: id})
				}
			}
		}
	}
	slices.SortStableFunc(keys, func(a, b model.DeviceKey) int {
		if c := agentconfig.NaturalCompare(string(a.Name), string(b.Name)); c != 0 {
			return c
		}
		return agentconfig.NaturalCompare(string(a.ID), string(b.ID))
	})

	holders := map[model.DeviceKey][]Holder{}
	if snap != nil {
		for _, k := range snap.Kernels() {
			dks, held := kernelHoldings(k)
			for _, dk := range dks {
				h := held[dk]
				for i := range h.slots {
					holders[dk] = append(holders[dk], Holder{Kernel: k.ID, Agent: k.Agent, Slot: h.slots[i], Amount: h.amounts[i]})
				}
			}
		}
	}

	deltas := map[model.AgentID]*AgentDelta{}
	for _, a := range next.Agents {
		d := &AgentDelta{Agent: a.ID, MemTo: a.Mem}
		if ca := cur.Agent(a.ID); ca != nil {
			d.MemFrom = ca.Mem
		}
		deltas[a.ID] = d
	}
	kept := map[model.AgentID]map[model.DeviceName][]model.DeviceID{}
	orphans := map[model.DeviceName][]model.DeviceID{}
	var orphanNames []model.DeviceName
	for _, k := range keys {
		before, after := cur.Owners(k), next.Owners(k)
		if slices.Equal(before, after) {
			for _, id := range after {
				if kept[id] == nil {
					kept[id] = map[model.DeviceName][]model.DeviceID{}
				}
				kept[id][k.Name] = append(kept[id][k.Name], k.ID)
			}
			continue
		}
		if len(after) == 0 && len(before) > 0 && next.Exclusive {
			if _, ok := orphans[k.Name]; !ok {
				orphanNames = append(orphanNames, k.Name)
			}
			orphans[k.Name] = append(orphans[k.Name], k.ID)
		}
		m := DeviceMove{Device: Key(k), Key: k, From: before, To: after}
		for _, h := range holders[k] {
			h.Stranded = !slices.Contains(after, h.Agent)
			m.Holders = append(m.Holders, h)
		}
		p.Moves = append(p.Moves, m)
		for _, id := range after {
			if d := deltas[id]; d != nil && !slices.Contains(before, id) {
				d.Gains = append(d.Gains, Key(k))
			}
		}
		for _, id := range before {
			if d := deltas[id]; d != nil && !slices.Contains(after, id) {
				d.Losses = append(d.Losses, Key(k))
			}
		}
	}

	for _, n := range orphanNames {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s %s will be owned by no agent: no kernel can be placed there", n, IDRanges(orphans[n])))
	}

	// Capacities (the slot-based format's whole partition) and strain.
	held := heldByAgent(snap)
	unattr := unattributedHeld(snap)
	for _, a := range next.Agents {
		d := deltas[a.ID]
		ca := cur.Agent(a.ID)
		for _, s := range a.Capacity.Names() {
			var from model.Dec
			if ca != nil {
				from = ca.Capacity[s]
			}
			if !from.Equal(a.Capacity[s]) {
				d.Capacity = append(d.Capacity, SlotChange{Slot: s, From: from, To: a.Capacity[s]})
			}
		}
		if next.Mode != agentconfig.ModeShared {
			slots := held[a.ID].Names()
			for _, s := range unattr.slots(a.ID) {
				if _, ok := held[a.ID][s]; !ok {
					slots = append(slots, s)
				}
			}
			for _, s := range slots {
				// Device-based partitions move devices (and cores),
				// which Moves covers; mem is an amount there too.
				if next.Exclusive && s != model.SlotMem {
					continue
				}
				c, ok := a.Capacity[s]
				if !ok {
					continue
				}
				before := model.Zero
				if ca != nil {
					before = ca.Capacity[s]
				}
				if c.Equal(before) {
					continue
				}
				own := held[a.ID][s]
				extra, ids := unattr.of(a.ID, s)
				switch {
				case c.Less(own):
					p.Strained = append(p.Strained, Strain{Agent: a.ID, Slot: s, Held: own, Capacity: c})
				case c.Less(own.Add(extra)):
					// Kernels whose agent cannot be told may be this
					// agent's: then it would hold more than it is given.
					p.Strained = append(p.Strained, Strain{Agent: a.ID, Slot: s, Held: own.Add(extra), Capacity: c, Unattributed: ids})
				}
			}
		}
		p.Agents = append(p.Agents, *d)
	}

	// What does not change, in words.
	if p.ModeFrom == p.ModeTo {
		p.Unchanged = append(p.Unchanged, fmt.Sprintf("allocation-mode stays %s", p.ModeTo))
	}
	for _, a := range next.Agents {
		var parts []string
		if kept[a.ID] != nil && next.Exclusive && cur.Exclusive {
			names := make([]model.DeviceName, 0, len(kept[a.ID]))
			for n := range kept[a.ID] {
				names = append(names, n)
			}
			agentconfig.SortNatural(names)
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %s", n, IDRanges(kept[a.ID][n])))
			}
		}
		if next.Format == agentconfig.FormatSlotBased && next.Mode != agentconfig.ModeShared {
			// The slot-based partition is capacities: say which stay.
			if ca := cur.Agent(a.ID); ca != nil {
				for _, s := range a.Capacity.Names() {
					if v, ok := ca.Capacity[s]; ok && s != model.SlotMem && v.Equal(a.Capacity[s]) {
						parts = append(parts, fmt.Sprintf("%s %s", s, amount(s, a.Capacity[s])))
					}
				}
			}
		}
		if d := deltas[a.ID]; d.MemFrom.Equal(d.MemTo) && !d.MemTo.IsZero() {
			parts = append(parts, "mem "+model.FormatBinarySize(d.MemTo))
		}
		if len(parts) > 0 {
			p.Unchanged = append(p.Unchanged, fmt.Sprintf("%s keeps %s", a.ID, strings.Join(parts, "; ")))
		}
	}
	if !next.Exclusive && !cur.Exclusive {
		p.Unchanged = append(p.Unchanged, "every agent keeps every device (not exclusive)")
	}
	slices.SortStableFunc(p.Strained, func(a, b Strain) int {
		if c := cmp.Compare(a.Agent, b.Agent); c != 0 {
			return c
		}
		return cmp.Compare(a.Slot, b.Slot)
	})
}

// Verify compares a config read back from disk with the plan's partition
// and returns every difference (nil when it matches).
func (p *Plan) Verify(c *agentconfig.Config) []string {
	var out []string
	for _, pr := range c.Problems {
		out = append(out, "the written file breaks a rule: "+pr.String())
	}
	got := Effective(c, p.inv)
	want := p.Next
	if got.Mode != want.Mode {
		out = append(out, fmt.Sprintf("allocation-mode is %s, planned %s", got.Mode, want.Mode))
	}
	if got.Format != want.Format {
		out = append(out, fmt.Sprintf("the file reads as %s, planned %s", got.Format, want.Format))
	}
	if len(got.Agents) != len(want.Agents) {
		return append(out, fmt.Sprintf("%d agents, planned %d", len(got.Agents), len(want.Agents)))
	}
	for i, w := range want.Agents {
		g := got.Agents[i]
		if g.ID != w.ID {
			out = append(out, fmt.Sprintf("agent #%d is %s, planned %s", i, g.ID, w.ID))
			continue
		}
		if !g.Mem.Equal(w.Mem) {
			out = append(out, fmt.Sprintf("agent %s: mem %s, planned %s", g.ID, g.Mem, w.Mem))
		}
		if (g.Owns == nil) != (w.Owns == nil) {
			out = append(out, fmt.Sprintf("agent %s: device ownership differs from the plan", g.ID))
			continue
		}
		names := map[model.DeviceName]bool{}
		for n := range g.Owns {
			names[n] = true
		}
		for n := range w.Owns {
			names[n] = true
		}
		sorted := make([]model.DeviceName, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		agentconfig.SortNatural(sorted)
		for _, n := range sorted {
			if !slices.Equal(g.Owns[n], w.Owns[n]) {
				out = append(out, fmt.Sprintf("agent %s: %s is %s, planned %s", g.ID, n, IDRanges(g.Owns[n]), IDRanges(w.Owns[n])))
			}
		}
		for _, s := range w.Capacity.Names() {
			if !g.Capacity[s].Equal(w.Capacity[s]) {
				out = append(out, fmt.Sprintf("agent %s: %s capacity %s, planned %s", g.ID, s, g.Capacity[s], w.Capacity[s]))
			}
		}
	}
	return out
}
