package partition

import (
	"errors"
	"fmt"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// RollbackPreview is what undoing the last apply through the desk would do
// now: shown before anything is written, and checked again when the
// rollback is made (Session.UndoApply).
type RollbackPreview struct {
	// Undoes is the journal's record of the apply a rollback undoes.
	Undoes *agentconfig.JournalRecord
	// Verdict is what Backend.AI main makes of the version restored (""
	// when it loads it; RestoreVerdict).
	Verdict string
	// Judgement is the restored partition against the live kernels, not
	// forced: a Refusal is why the desk will not roll back.
	Judgement RestoreJudgement
	// JournalWarning is said when journal lines cannot be read: one may be
	// a later apply or rollback.
	JournalWarning string
}

// ErrUndoMoved is a rollback refused because the apply it would undo is
// not the one its preview showed (another apply or rollback since, here
// or by another process).
var ErrUndoMoved = agentconfig.ErrUndoMoved

// PreviewRollback says what undoing the last apply would do now, judged as
// `fgtop rollback` judges it, against the desk's latest snapshot. It reads
// the journal, the backup and the file: call it off a UI loop.
func (s *Session) PreviewRollback() (*RollbackPreview, error) {
	d := s.desk
	d.mu.Lock()
	err := s.gone()
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return d.previewRollback()
}

func (d *Desk) previewRollback() (*RollbackPreview, error) {
	top, err := agentconfig.Undoable(d.opts.Config, d.opts.Journal)
	pv := &RollbackPreview{Undoes: top, JournalWarning: agentconfig.JournalWarning(d.opts.Config, d.opts.Journal)}
	if err != nil {
		return pv, err
	}
	cur, err := agentconfig.Load(d.opts.Config)
	if cur == nil {
		return pv, fmt.Errorf("read %s: %w", d.opts.Config, err)
	}
	if cur.Hash != top.NewHash {
		// The writer refuses it unforced (ErrChangedOnDisk), and the desk
		// never forces: said before a dialog is confirmed in vain.
		return pv, fmt.Errorf("%w: %s is not the file the apply of %s by %s wrote (it was changed since, by hand or by another tool)",
			agentconfig.ErrChangedOnDisk, d.opts.Config, top.Time.Local().Format("2006-01-02 15:04:05"), top.Actor)
	}
	pv.Verdict = RestoreVerdict(top)
	// The desk plans from the snapshot alone, as its applies do: a root
	// the engine cannot read is an issue of that snapshot, not counted
	// here.
	snap := d.opts.Snapshot()
	if snap == nil {
		// Before the engine's first scan no kernel is known: judging none
		// would pass kernels it has not seen, as `fgtop rollback` refuses
		// a node it could not scan.
		pv.Judgement = JudgeRestoreUnscanned(d.opts.Config, errors.New("the node has not been scanned yet"), false)
		return pv, nil
	}
	pv.Judgement = JudgeRestore(top, cur, snap, 0, false)
	return pv, nil
}

// UndoApply rolls back the apply seen (a preview's Undoes) for the
// session's actor, never forced: it is refused when that is no longer the
// last apply in effect (ErrUndoMoved), when the file changed since it
// (the rollback's own check), or when the restored partition would now
// affect live kernels or cannot judge them (ErrLiveKernels): kernels may
// have started since the preview was read.
func (s *Session) UndoApply(seen *agentconfig.JournalRecord) (*agentconfig.CommitResult, error) {
	d := s.desk
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.Lock()
	err := s.gone()
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	pv, err := d.previewRollback()
	if err != nil {
		return nil, err
	}
	if seen == nil || pv.Undoes == nil || !pv.Undoes.Time.Equal(seen.Time) || pv.Undoes.NewHash != seen.NewHash {
		return nil, fmt.Errorf("%w: look at the journal again", ErrUndoMoved)
	}
	if pv.Judgement.Refusal != "" {
		return nil, fmt.Errorf("%w: %s", ErrLiveKernels, pv.Judgement.Refusal)
	}
	// The writer compares again under the journal's lock: another
	// process (fgtop apply from a shell) may apply between this check
	// and that lock, and its apply was neither shown nor judged.
	res, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: d.opts.Config, Actor: s.actor, Journal: d.opts.Journal,
		Undoes: seen, Now: d.opts.Now, Hooks: d.opts.Hooks})
	if res != nil {
		d.wrote(s, true)
	}
	return res, err
}
