package partition

import (
	"fmt"
	"io"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/safefile"
	"github.com/fgtop/fgtop/model"
)

// JudgeRestore is what a rollback makes of restoring the version top
// names (the file before the last apply still in effect) over cur, on the
// node in snap, with the rules apply judges a plan by. The restored
// partition is compared with the live kernels: where they would hold a
// device that moves, or more than their agent's restored amount, or where
// scratch roots could not be read (blind), refusal says why, unless
// force. warnings say where the restored file fails the agent's start-up
// checks against the node's devices: said and not refused, since going
// back to a file an agent stopped on may be the very point of a rollback
// (RestoreVerdict says what main's loader makes of it).
func JudgeRestore(top *agentconfig.JournalRecord, cur *agentconfig.Config, snap *model.Snapshot, blind int, force bool) (j RestoreJudgement) {
	if top == nil || top.Backup == "" || cur == nil {
		return j
	}
	raw, err := safefile.ReadFileNoFollow(top.Backup, agentconfig.MaxConfigSize)
	if err != nil {
		return j // the rollback itself says why it cannot read it
	}
	next, _ := agentconfig.Parse(top.Config, raw)
	if next == nil {
		return j // RestoreVerdict: it does not load
	}
	inv := InventoryOf(snap)
	if len(next.Problems) == 0 {
		var ps []string
		for _, pr := range next.ValidateWith(inv.Devices, inv.ValidateOptions()) {
			ps = append(ps, pr.String())
		}
		if len(ps) > 0 {
			j.Warnings = append(j.Warnings, "the version to restore fails the agent's start-up checks on this node: "+strings.Join(ps, "; ")+
				": an agent restarted with it will not start")
		}
	}
	p := &Plan{Config: cur.Path, inv: inv, ModeFrom: cur.Mode, ModeTo: next.Mode, Current: Effective(cur, inv), Next: Effective(next, inv)}
	p.compare(snap)
	p.Unread = unreadKernels(snap)
	if inv.AcceleratorsUnknown && next.Mode == agentconfig.ModeManual && givesAccelerators(next) && p.accelChanged() {
		// Said, not refused: a restored file that fails these checks is
		// only warned of either.
		j.Warnings = append(j.Warnings, "the agent's start-up checks on the restored accelerator amounts were not run: the node's accelerators or their capacities are unknown")
	}
	for _, a := range p.Affected() {
		j.Affected = append(j.Affected, strings.Replace(a, "more than its planned ", "more than its restored ", 1))
	}
	if force {
		return j
	}
	var why []string
	if len(j.Affected) > 0 {
		why = append(why, strings.ReplaceAll(p.affectedWhy(), "planned amount", "restored amount"))
	}
	if blind > 0 {
		why = append(why, fmt.Sprintf("%d scratch root(s) cannot be read, so the live kernels the rollback may affect cannot be seen", blind))
	}
	if n := len(p.Unread); n > 0 {
		// As apply refuses: what those kernels hold is not known.
		why = append(why, fmt.Sprintf("%d kernel file(s) could not be read or parsed, so what those kernels hold is not known", n))
	}
	if ro := agentconfig.ReadOnlyWhy(cur.Path); ro != "" {
		why = append(why, ro)
	}
	if len(why) > 0 {
		j.Refusal = fmt.Sprintf("refusing to roll back: %s (--force rolls back anyway); %s is untouched", strings.Join(why, "; and "), cur.Path)
	}
	return j
}

// JudgeRestoreUnscanned is a rollback's judgement of config's restore
// when the node could not be scanned (err): the live kernels the restore
// would strand cannot be judged, so it is refused unless force, and with
// force said as a warning.
func JudgeRestoreUnscanned(config string, err error, force bool) RestoreJudgement {
	if !force {
		why := fmt.Sprintf("the live kernels cannot be judged (%v)", err)
		if ro := agentconfig.ReadOnlyWhy(config); ro != "" {
			why += "; and " + ro
		}
		return RestoreJudgement{Refusal: fmt.Sprintf("refusing to roll back: %s (--force rolls back anyway); %s is untouched", why, config)}
	}
	return RestoreJudgement{Warnings: []string{fmt.Sprintf("the live kernels were not judged: %v", err)}}
}

// RestoreJudgement is JudgeRestore's answer.
type RestoreJudgement struct {
	// Warnings: the restored file fails the agent's start-up checks.
	Warnings []string
	// Affected are the live kernels the restored partition would leave
	// on devices their agent no longer owns or above its amount, one line
	// each (Plan.Affected's words).
	Affected []string
	// Refusal is why the rollback is not made ("" to go on).
	Refusal string
}

// WriteRestoreAffected writes the live kernels a rollback affects, before
// it asks or refuses.
func WriteRestoreAffected(w io.Writer, j RestoreJudgement) {
	if len(j.Affected) == 0 {
		return
	}
	fmt.Fprintf(w, "live kernels the restored partition affects (%d):\n", len(j.Affected))
	for _, a := range j.Affected {
		fmt.Fprintf(w, "  %s\n", a)
	}
}
