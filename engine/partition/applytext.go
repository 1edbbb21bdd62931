package partition

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/safefile"
)

// The words of `fgtop apply` and `fgtop rollback` around the write: what
// apply makes of a plan before writing, what was written, what a rollback
// undoes. The command reads the flags, asks for confirmation, runs the
// write and maps a verdict to its exit status; what it says is here, so
// that it is tested without a terminal.

// ApplyVerdict is what apply makes of a plan before it writes anything.
type ApplyVerdict int

const (
	// ApplyGo: the plan may be written.
	ApplyGo ApplyVerdict = iota
	// ApplyNothing: the plan changes nothing; there is nothing to write.
	ApplyNothing
	// ApplyInvalid: the plan breaks the agent's rules (bad usage).
	ApplyInvalid
	// ApplyRefused: the plan is valid, but writing it now would hurt what
	// cannot be seen or what runs; --force writes anyway.
	ApplyRefused
)

// JudgeApply says whether apply writes p, and in what words it does not.
// blind counts the scratch roots that could not be read: moves and capacity
// cuts are judged against the live kernels, and some of them are unseen
// then. force is --force, which overrides the refusals over live kernels,
// not an invalid plan.
func JudgeApply(p *Plan, blind int, force bool) (ApplyVerdict, string) {
	switch {
	case !p.Valid():
		return ApplyInvalid, fmt.Sprintf("refusing to apply: the plan is invalid (%d error(s)); %s is untouched", len(p.Errors), p.Config)
	case !p.Changed():
		return ApplyNothing, "nothing to apply"
	case force:
		return ApplyGo, ""
	}
	// Every reason, so that a --force given for one is not taken for
	// the others unseen.
	var why []string
	if len(p.Affected()) > 0 {
		why = append(why, p.affectedWhy())
	}
	if blind > 0 {
		why = append(why, fmt.Sprintf("%d scratch root(s) cannot be read, so the live kernels this change may affect cannot be seen", blind))
	}
	why = append(why, p.Unchecked()...)
	if ro := agentconfig.ReadOnlyWhy(p.Config); ro != "" {
		why = append(why, ro)
	}
	if len(why) > 0 {
		return ApplyRefused, fmt.Sprintf("refusing to apply: %s (--force applies anyway); %s is untouched", strings.Join(why, "; and "), p.Config)
	}
	return ApplyGo, ""
}

// affectedWhy says what makes the plan affect live kernels: devices that
// move (device lists) or agents whose kernels hold more than their planned
// amount (slot-based, where nothing moves and the old words would send an
// operator looking for a move that is not there).
func (p *Plan) affectedWhy() string {
	var moved bool
	for _, m := range p.Moves {
		for _, h := range m.Holders {
			moved = moved || h.Stranded
		}
	}
	var strained, maybe []string
	for _, s := range p.Strained {
		a := string(s.Agent)
		switch {
		case len(s.Unattributed) == 0 && !slices.Contains(strained, a):
			strained = append(strained, a)
		case len(s.Unattributed) > 0 && !slices.Contains(maybe, a):
			maybe = append(maybe, a)
		}
	}
	maybe = slices.DeleteFunc(maybe, func(a string) bool { return slices.Contains(strained, a) })
	var over []string
	if moved {
		over = append(over, "live kernels hold devices that move")
	}
	if len(strained) > 0 {
		over = append(over, fmt.Sprintf("the live kernels of %s hold more than the planned amount", strings.Join(strained, ", ")))
	}
	if len(maybe) > 0 {
		over = append(over, fmt.Sprintf("live kernels whose agent cannot be told would put %s above its planned amount if they are its", strings.Join(maybe, " or ")))
	}
	return strings.Join(over, ", and ")
}

// Invalid is why plan exits 2 on an invalid plan, "" for a valid one: the
// errors themselves are in the plan's text above it.
func (p *Plan) Invalid() string {
	if p.Valid() {
		return ""
	}
	return fmt.Sprintf("the plan is invalid (%d error(s)): fix the request or the config as the errors above say", len(p.Errors))
}

// DraftStaleNote is what apply says when h holds a console's draft of the
// file it is about to write: the write makes that draft stale.
func DraftStaleNote(h Hold) string {
	return fmt.Sprintf("note: %s is editing the partition in a console; applying makes that draft stale (it must be reviewed before it can be applied)", h)
}

// Verified is apply's last line when the file read back gives the plan.
const Verified = "verified: the file read back gives the planned partition"

// RestartNeeded is what apply and rollback say when no restart command was
// given: the write alone changes nothing the agent does.
const RestartNeeded = "restart needed: the agent reads agent.toml only at start-up; restart it (or pass --restart-cmd CMD) for the change to take effect"

// ShortHash is a sha256 as the commands show it: its first 12 hex digits,
// enough to tell versions of one file apart.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// WriteApplied writes what an apply wrote: the file with its hashes before
// and after, the backup of the previous version and the journal.
func WriteApplied(w io.Writer, res *agentconfig.CommitResult) {
	fmt.Fprintf(w, "written: %s (sha256 %s -> %s)\nprevious version: %s\njournal: %s\n",
		res.Path, ShortHash(res.OldHash), ShortHash(res.NewHash), res.Backup, res.Journal)
}

// WriteUndoing writes which apply a rollback undoes (top, the journal's
// latest apply still in effect) before it asks to go on.
func WriteUndoing(w io.Writer, top *agentconfig.JournalRecord) {
	fmt.Fprintf(w, "undoing the apply of %s by %s (%s): %s -> restore %s (sha256 %s)\n",
		top.Time.Format("2006-01-02 15:04:05Z07:00"), top.Actor, top.Origin, ShortHash(top.NewHash), top.Backup, ShortHash(top.OldHash))
}

// WriteRestored writes what a rollback wrote: the file restored with its
// hash, the backup of the version it replaced and the journal.
func WriteRestored(w io.Writer, res *agentconfig.CommitResult) {
	fmt.Fprintf(w, "restored: %s (sha256 %s)\nversion replaced: %s\njournal: %s\n", res.Path, ShortHash(res.NewHash), res.Backup, res.Journal)
}

// RestoreVerdict is what Backend.AI main makes of the version a rollback
// of top restores, "" when it loads it. A rollback restores the bytes as
// they were, a file main refused included (the apply that fixed it is the
// one undone): said before it is confirmed, as plan says of the current
// file, so that nobody restarts an agent into a file it will not load.
func RestoreVerdict(top *agentconfig.JournalRecord) string {
	if top == nil || top.Backup == "" {
		return ""
	}
	raw, err := safefile.ReadFileNoFollow(top.Backup, agentconfig.MaxConfigSize)
	if err != nil {
		return "" // the rollback itself says why it cannot read it
	}
	cfg, err := agentconfig.Parse(top.Config, raw)
	switch {
	case cfg == nil:
		return fmt.Sprintf("the version to restore does not load (%v): an agent restarted with it will not start", err)
	case len(cfg.Problems) > 0:
		var ps []string
		for _, p := range cfg.Problems {
			ps = append(ps, p.String())
		}
		return "the version to restore breaks a rule Backend.AI main checks when it loads the file: " + strings.Join(ps, "; ") +
			": an agent restarted with it will not start"
	}
	return ""
}
