package partition

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
)

// Refusals of Apply; the file is untouched after each.
var (
	ErrInvalidPlan = errors.New("the plan is invalid")
	ErrNoChange    = errors.New("the plan changes nothing")
	// ErrLiveKernels: devices live kernels hold would move; force to go on.
	ErrLiveKernels = errors.New("live kernels are affected")
)

// ApplyOptions say who applies and how.
type ApplyOptions struct {
	Actor agentconfig.Actor
	// Force applies even when live kernels hold devices that move (the
	// CLI's --force; a typed confirmation in the console).
	Force bool
	// ReadOnlyOK writes a config whose mode gives its owner no write
	// permission, keeping the mode (the CLI's --force; the console has
	// none: such a file is refused there).
	ReadOnlyOK bool
	// Journal is the journal path ("" = beside the config).
	Journal string
	Now     func() time.Time
	// Hooks stop the writer between steps (tests).
	Hooks *agentconfig.Hooks
}

// ApplyResult is what an apply did.
type ApplyResult struct {
	agentconfig.CommitResult
	// Verified is true when the file read back gives the planned partition.
	Verified bool
	// RestartNeeded is always true after a write: the agent reads
	// agent.toml only at start-up.
	RestartNeeded bool
}

// Apply writes the plan's file. It refuses a viewer (whatever any UI
// shows), an invalid plan, a plan that changes nothing, a plan that moves
// devices live kernels hold (unless forced), and a file that changed on
// disk since the plan was made; then it writes atomically with a backup,
// reads the file back and checks it gives the planned partition, and
// journals the change. A mismatch after writing is reported in the result
// (Verified false, Mismatch listing it) and the journal, with an error.
func Apply(p *Plan, opts ApplyOptions) (*ApplyResult, error) {
	if !opts.Actor.CanWrite() {
		return nil, fmt.Errorf("%w: %s (role %q) may not apply a partition", agentconfig.ErrNotAllowed, opts.Actor, opts.Actor.Role)
	}
	if !p.Valid() {
		return nil, fmt.Errorf("%w:\n  %s", ErrInvalidPlan, strings.Join(p.Errors, "\n  "))
	}
	if !p.Changed() {
		return nil, ErrNoChange
	}
	affected := p.Affected()
	if len(affected) > 0 && !opts.Force {
		return nil, fmt.Errorf("%w (force to apply anyway; the kernels keep running where they are until they end):\n  %s", ErrLiveKernels, strings.Join(affected, "\n  "))
	}
	res, err := agentconfig.Commit(agentconfig.CommitRequest{
		Path: p.Config, BaseHash: p.BaseHash, Data: p.NewRaw, Actor: opts.Actor,
		Plan: p, Forced: opts.Force && len(affected) > 0, ReadOnlyOK: opts.ReadOnlyOK, Verify: p.Verify, Assume: p.assume,
		Journal: opts.Journal, Now: opts.Now, Hooks: opts.Hooks,
	})
	if res == nil {
		return nil, err
	}
	out := &ApplyResult{CommitResult: *res, Verified: len(res.Mismatch) == 0, RestartNeeded: true}
	if err == nil && !out.Verified {
		err = fmt.Errorf("written, but the file read back does not give the planned partition:\n  %s\nthe previous version is in %s (fgtop rollback restores it)",
			strings.Join(res.Mismatch, "\n  "), res.Backup)
	}
	return out, err
}
