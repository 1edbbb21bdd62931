package partition

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Schema is whose verdict a check follows: Backend.AI main's (what an
// agent started today does), or the unmerged BEP-1044 draft's (PR #8463).
type Schema string

// The schemas a check can follow.
const (
	SchemaMain  Schema = "main"
	SchemaDraft Schema = "bep-1044"
)

// ParseSchema reads the schema an operator names (check's --schema):
// main (also ""), or the draft as bep-1044, bep1044 or pr8463, in any
// case. The error says which are known.
func ParseSchema(s string) (Schema, error) {
	switch strings.ToLower(s) {
	case "", "main":
		return SchemaMain, nil
	case "bep-1044", "bep1044", "pr8463":
		return SchemaDraft, nil
	}
	return "", fmt.Errorf("--schema %q: want main (Backend.AI main's loader, the default) or bep-1044 (the unmerged draft, PR #8463)", s)
}

// CheckClass is what a check's verdict means to a script: the exit class.
type CheckClass int

const (
	// CheckOK: the agent loads and starts with the file and the live state
	// matches it (draft-only under SchemaDraft included).
	CheckOK CheckClass = iota
	// CheckFinding: drift, or something that was not checked (a scratch
	// root unseen, a manual partition's accelerator amounts unjudged).
	CheckFinding
	// CheckRefused: the agent of the schema would not load the file, or
	// would stop at start-up on this node.
	CheckRefused
)

// CheckSchema names check --json's document, as fgtop.plan/v1 and
// fgtop.snapshot/v1 name theirs: a script that reads several of fgtop's
// documents tells them apart by it.
const CheckSchema = "fgtop.check/v1"

// CheckReport is a check's verdict as scripts read it (fgtop check --json):
// its field names and order are a contract.
type CheckReport struct {
	// Schema is CheckSchema. (Before it was named, "schema" held what
	// JudgedBy now does.)
	Schema string `json:"schema"`
	Config string `json:"config"`
	// JudgedBy is whose verdict the status and exit code follow (--schema):
	// main or bep-1044, as plan --json's judged_by.
	JudgedBy string `json:"judged_by"`
	// Status: ok, drift, invalid (the loader of JudgedBy refuses the file),
	// wont-start (it loads, but the agent would stop at start-up on this
	// node), unchecked (the file is fine, but scratch roots are missing or
	// unreadable, so the live state was not checked, or a manual
	// partition's accelerator amounts could not be judged), draft-only (with
	// --schema bep-1044: the draft loads it and the live state matches,
	// but main does not load it).
	Status string `json:"status"`
	// LoadsOnMain and LoadsOnDraft are the verdicts of Backend.AI main's
	// config loader and of PR #8463's, whatever JudgedBy is; MainErrors and
	// DraftErrors are each one's reasons.
	LoadsOnMain  bool     `json:"loads_on_main"`
	LoadsOnDraft bool     `json:"loads_on_bep1044_draft"`
	MainErrors   []string `json:"main_errors,omitempty"`
	DraftErrors  []string `json:"bep1044_draft_errors,omitempty"`
	Problems     []string `json:"problems,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	// LiveChecked is false when a scratch root is missing or unreadable
	// (the kernels under it were not seen), a kernel's file could not be
	// read or parsed (UnreadFiles), or kernels hold a slot whose capacity
	// depends on the mock plugin's settings, which were not read (nothing
	// is judged against the guessed ones).
	LiveChecked bool `json:"live_state_checked"`
	// StartupChecked is false when a manual partition's accelerator
	// amounts could not be judged: the node's accelerators or their
	// capacities are unknown, so the agent's start-up checks on them
	// (every plugin's slot given, no slot over-allocated) did not run.
	StartupChecked bool `json:"startup_checked"`
	// UnreadRoots counts the scratch roots that could not be read: the
	// drift verdict did not see the kernels under them.
	UnreadRoots int           `json:"unread_scratch_roots,omitempty"`
	Drift       []model.Issue `json:"drift,omitempty"`
	Notes       []model.Issue `json:"notes,omitempty"`
	Partition   *Partition    `json:"partition,omitempty"`
	// UnreadFiles are the kernels' files that could not be read or parsed
	// (parse-error, permission-denied, symlink-escape): what those kernels
	// hold is not known, so the live state is not "ok".
	UnreadFiles []model.Issue `json:"unread_files,omitempty"`
}

// CheckResult is a check's verdict: the report, its exit class, and what a
// printer needs to say it.
type CheckResult struct {
	Report CheckReport
	Class  CheckClass
	// Reason says in one line why Class is not CheckOK; empty when it is.
	Reason string
	// Headline, for CheckRefused only, says which agent refuses the file
	// and why; Report.Problems lists the reasons.
	Headline string
	// NodeProblems, for CheckRefused only, says the problems are the
	// start-up checks against this node's devices (not the loader's).
	NodeProblems bool
	// Verdict is the config's loader verdict, never nil.
	Verdict *agentconfig.Verdict
	// Failing counts the drift issues that fail the check.
	Failing int
	// AccelUnchecked is true when a manual partition's accelerator amounts
	// could not be judged (the node's accelerators are unknown).
	AccelUnchecked bool

	// What the check judged, for WriteText.
	cfg    *agentconfig.Config
	snap   *model.Snapshot
	unseen int
	schema Schema
}

// Check judges cfg under schema against the live node in snap. unseen
// counts the scratch roots that are missing or could not be read: the
// live state is then not known, and the verdict says so rather than
// "matches". Check is pure: it reads cfg and snap and touches nothing.
func Check(cfg *agentconfig.Config, snap *model.Snapshot, unseen int, schema Schema) *CheckResult {
	res := &CheckResult{Verdict: cfg.Verdict, cfg: cfg, snap: snap, unseen: unseen, schema: schema}
	if res.Verdict == nil {
		res.Verdict = &agentconfig.Verdict{}
	}
	v := res.Verdict
	rep := &res.Report
	*rep = CheckReport{Schema: CheckSchema, Config: cfg.Path, JudgedBy: string(schema), Status: "ok", Warnings: slices.Clone(cfg.Warnings), UnreadRoots: unseen, LiveChecked: unseen == 0}
	if snap != nil && cfg.Mode == agentconfig.ModeManual {
		if InventoryOf(snap).AcceleratorsUnknown {
			rep.Warnings = append(rep.Warnings, cfg.SlotTyposBlind()...)
		} else {
			rep.Warnings = append(rep.Warnings, cfg.UnknownSlots(snap.Devices)...)
		}
	}
	rep.LoadsOnMain, rep.LoadsOnDraft = v.Main, v.Draft
	for _, p := range v.MainErrors {
		rep.MainErrors = append(rep.MainErrors, p.String())
	}
	for _, p := range v.DraftErrors {
		rep.DraftErrors = append(rep.DraftErrors, p.String())
	}
	loads := v.Main
	if schema == SchemaDraft {
		loads = v.Draft
	}
	inv := InventoryOf(snap)
	var startup []agentconfig.Problem
	if loads {
		startup = cfg.ValidateWith(snap.Devices, inv.ValidateOptions())
	}
	refuse := func(status, headline string, problems []agentconfig.Problem, node bool, reason string) *CheckResult {
		rep.Status = status
		for _, p := range problems {
			rep.Problems = append(rep.Problems, p.String())
		}
		res.Class, res.Headline, res.NodeProblems, res.Reason = CheckRefused, headline, node, reason
		return res
	}
	switch {
	case schema == SchemaMain && v.DraftOnly() && cfg.IsDraftFormat():
		return refuse("invalid", agentconfig.DraftFormatWarning+": an agent running Backend.AI main does not start with it (only the unmerged BEP-1044 draft, PR #8463, loads it; --schema bep-1044 checks it against the draft)",
			v.MainErrors, false, cfg.Path+": Backend.AI main's agent would refuse to load it")
	case schema == SchemaMain && v.DraftOnly():
		return refuse("invalid", "the agent will not start: Backend.AI main refuses to load this file", v.MainErrors, false,
			cfg.Path+": the agent would refuse to load it")
	case schema == SchemaMain && !v.Main:
		return refuse("invalid", "the agent will not start: Backend.AI refuses to load this file", cfg.Problems, false,
			cfg.Path+": the agent would refuse to load it")
	case schema == SchemaDraft && !v.Draft:
		problems := v.DraftErrors
		if len(problems) == 0 {
			problems = cfg.Problems
		}
		return refuse("invalid", "the BEP-1044 draft (PR #8463) refuses to load this file, so an agent built from it would not start", problems, false,
			cfg.Path+": the BEP-1044 draft's agent would refuse to load it")
	case schema == SchemaMain && len(startup) > 0:
		return refuse("wont-start", "Backend.AI main loads this file, but the agent would stop at start-up on this node", startup, true,
			cfg.Path+": the agent would not start on this node")
	case schema == SchemaDraft && len(startup) > 0:
		return refuse("wont-start", "the BEP-1044 draft (PR #8463) loads this file, but an agent built from it would stop at start-up on this node", startup, true,
			cfg.Path+": the draft's agent would not start on this node")
	}
	part := Effective(cfg, inv)
	rep.Partition = part
	for _, iss := range Drift(part, snap) {
		if iss.Code == model.IssueDriftMemBeyond || iss.Code == model.IssueDriftCPUBeyond {
			// A judgement of the file, which loads: plan warns of it
			// too, and neither fails on it.
			rep.Notes = append(rep.Notes, iss)
			continue
		}
		rep.Drift = append(rep.Drift, iss)
		if iss.Severity >= model.SevWarning {
			res.Failing++
		}
	}
	// The mock's unread settings are said once, in UnknownNote's words
	// with the reason, not also as the source's own warning.
	mockWhy := MockUnread(snap)
	for _, iss := range snap.Issues {
		if holdingUnknown(snap, iss) {
			rep.UnreadFiles = append(rep.UnreadFiles, iss)
			rep.LiveChecked = false
			continue
		}
		switch iss.Code {
		case model.IssueOverCapacity:
			if iss.Severity < model.SevError {
				// Cores time-shared by several agents, each within
				// them: the slot-based form's ordinary busy state, not a
				// difference from the file.
				rep.Notes = append(rep.Notes, iss)
				continue
			}
			rep.Drift = append(rep.Drift, iss)
			res.Failing++
		case model.IssueUnknownDevice:
			if iss.Severity < model.SevError {
				// The device source is unavailable, or lists no such
				// devices at all: not known to differ.
				rep.Notes = append(rep.Notes, iss)
				continue
			}
			// Live kernels hold a device their agent's plugin does not
			// register (its device_mask, or another node's kernel): the
			// node's settings and its kernels disagree, and "the live
			// state matches" would be false.
			rep.Drift = append(rep.Drift, iss)
			res.Failing++
		case model.IssueAgentConflict:
			// A kernel's own record names an agent the file does not
			// list, or one whose scratch root is elsewhere: the file and
			// the node disagree on who runs it.
			rep.Drift = append(rep.Drift, iss)
			res.Failing++
		case model.IssueDriftNotOwner, model.IssueDriftUnowned, model.IssueDriftMemBeyond, model.IssueDriftCPUBeyond:
			// Drift computes these from the config itself.
		default:
			if iss.Severity >= model.SevWarning && !(mockWhy != "" && isMockUnread(iss)) {
				rep.Notes = append(rep.Notes, iss)
			}
		}
	}
	if heldGuessed(snap) {
		// The engine left these holdings unjudged (no over-capacity, no
		// unsupported slot): not a live state that matches.
		rep.LiveChecked = false
	}
	if inv.AcceleratorsUnknown {
		rep.Notes = append(rep.Notes, model.Issue{Severity: model.SevWarning, Code: model.IssueDeviceSource,
			Message: inv.UnknownNote()})
	}
	// Only a manual partition that gives accelerator amounts has start-up
	// checks that read the accelerators' slots and capacities; shared and
	// auto-split start on any set, and a node without NVIDIA GPUs (no NVML
	// library) has none to give.
	res.AccelUnchecked = inv.AcceleratorsUnknown && cfg.Mode == agentconfig.ModeManual && givesAccelerators(cfg)
	rep.StartupChecked = !res.AccelUnchecked
	switch {
	case res.Failing > 0:
		rep.Status = "drift"
		res.Class, res.Reason = CheckFinding, fmt.Sprintf("drift: %d problem(s) between %s and the live node", res.Failing, cfg.Path)
	case unseen > 0:
		rep.Status = "unchecked"
		res.Class, res.Reason = CheckFinding, fmt.Sprintf("the live state was not checked: %d scratch root(s) missing or unreadable", unseen)
	case len(rep.UnreadFiles) > 0:
		rep.Status = "unchecked"
		res.Class, res.Reason = CheckFinding, "the live state was not fully read: "+UnreadSummary(rep.UnreadFiles)
	case res.AccelUnchecked:
		rep.Status = "unchecked"
		why := "the node's accelerators or their capacities are unknown"
		switch {
		case inv.Plugin != nil && inv.Plugin.SettingsDiffer:
			why = "the agents' CUDA plugin settings differ, so each registers the GPUs its own way"
		case mockGuessed(inv.Source):
			why = mockUnreadWords
		}
		res.Class, res.Reason = CheckFinding, "the agent's start-up checks on accelerator amounts were not run: "+why
	case !rep.LiveChecked:
		// Only heldGuessed leaves LiveChecked false here.
		rep.Status = "unchecked"
		res.Class, res.Reason = CheckFinding, "what the live kernels hold of the mock plugin's accelerators was not judged: "+mockUnreadWords
	case v.DraftOnly():
		rep.Status = "draft-only"
	}
	return res
}

// mockUnreadWords is check's reason when the mock plugin's settings were
// not read; its note says why and what to pass.
const mockUnreadWords = "the mock plugin's settings were not read from the agent's etcd"

// isMockUnread reports whether iss is the mock plugin's warning that its
// settings were not read (MockUnread's).
func isMockUnread(iss model.Issue) bool {
	return iss.Code == model.IssueDeviceSource && iss.Severity == model.SevWarning && iss.File == ""
}

// heldGuessed reports whether the live kernels hold something the engine
// could not judge: a slot of the mode fgtop only guessed (GuessedHeld).
func heldGuessed(snap *model.Snapshot) bool {
	if snap == nil || !mockGuessed(snap.Source) {
		return false
	}
	for _, u := range snap.Usage {
		if u != nil && GuessedHeld(snap.Source, u.Held) {
			return true
		}
	}
	return false
}

// givesAccelerators reports whether some agent's allocation names an
// accelerator: a slot other than cpu and mem, or a device list.
func givesAccelerators(cfg *agentconfig.Config) bool {
	allocs := []*agentconfig.Allocation{cfg.GlobalAlloc}
	for i := range cfg.Agents {
		allocs = append(allocs, cfg.Agents[i].Alloc)
	}
	for _, a := range allocs {
		if a == nil {
			continue
		}
		if len(a.Devices) > 0 {
			return true
		}
		for slot := range a.Slots {
			if slot != model.SlotCPU && slot != model.SlotMem {
				return true
			}
		}
	}
	return false
}

// UnreadSummary names the files a check could not read, the first one in
// full: "2 kernel file(s) could not be read or parsed (PATH: why; and 1
// more)".
func UnreadSummary(unread []model.Issue) string {
	if len(unread) == 0 {
		return ""
	}
	first := unread[0]
	where := first.File
	if where == "" {
		where = string(first.Kernel)
	}
	if first.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, first.Line)
	}
	s := fmt.Sprintf("%d kernel file(s) could not be read or parsed (%s: %s", len(unread), where, first.Message)
	if len(unread) > 1 {
		s += fmt.Sprintf("; and %d more", len(unread)-1)
	}
	return s + ")"
}
