package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/engine/agentrestart"
	"github.com/fgtop/fgtop/engine/nodeopen"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/internal/jsonout"
	"github.com/fgtop/fgtop/internal/prompt"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/local"
	"github.com/spf13/cobra"
)

// The partition commands: check, plan, apply, rollback. They work on the
// agent.toml named by --config and the live node (kernels under the
// scratch roots, devices from --devices).

// changeFlags are the flags that describe a partition change (plan and
// apply).
type changeFlags struct {
	moves  []string
	mode   string
	cpu    []string
	mem    []string
	slots  []string
	from   string
	format string
}

func (f *changeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.moves, "move", nil, "give DEVICE to AGENT, taking it from whoever has it: cuda:ID=AGENT, cpu:3=AGENT, or ID=AGENT when only one plugin has ID (repeatable)")
	fl.StringVar(&f.mode, "mode", "", "switch allocation-mode: shared, auto-split or manual (manual starts from the partition in effect)")
	fl.StringArrayVar(&f.cpu, "cpu", nil, "set AGENT's cores: AGENT=0-7,16 (device-based) or AGENT=15, a count (slot-based) (repeatable)")
	fl.StringArrayVar(&f.mem, "mem", nil, "set AGENT's memory: AGENT=64G (repeatable)")
	fl.StringArrayVar(&f.slots, "slot", nil, "set AGENT's amount of SLOT in the slot-based format (Backend.AI main's): AGENT=cuda.shares=2.0, AGENT=cpu=15, AGENT=mem=64G; SLOT is cpu, mem or a slot the node registers (repeatable)")
	fl.StringVar(&f.from, "from", "", "take mode and allocation tables from DRAFT.toml (agents matched by id); the other flags apply on top")
	fl.StringVar(&f.format, "format", "", "allocation format of tables fgtop writes into a file that has none: slot-based (default, Backend.AI main's) or device-based (the BEP-1044 draft: main cannot load it); a file's existing tables keep their format")
}

// change is the flags' values as partition reads them.
func (f *changeFlags) change() partition.Change {
	return partition.Change{Moves: f.moves, Mode: f.mode, CPU: f.cpu, Mem: f.mem, Slots: f.slots, From: f.from, Format: f.format}
}

// request turns the flags into a partition.Request; bad syntax is a usage
// error (exit 2).
func (f *changeFlags) request() (partition.Request, error) {
	req, err := partition.ParseChange(f.change())
	if err != nil {
		return req, usageErr("%w", err)
	}
	return req, nil
}

// configPath is the agent.toml a partition command works on: --config, or
// the first of Backend.AI's usual places that exists (as the agent itself
// and `fgtop snapshot` look). None is a usage error naming every place.
func configPath(src *sourceFlags, cmdName string) (string, error) {
	if src.config != "" {
		return src.config, nil
	}
	path, err := agentconfig.Find()
	if err != nil {
		return "", usageErr("%s: %v\npoint it at the file with --config FILE", cmdName, err)
	}
	return path, nil
}

// configHelp is what the help of check, plan, apply and rollback says about
// finding agent.toml.
const configHelp = `Without --config, agent.toml is looked for where Backend.AI's agent looks:
$BACKEND_CONFIG_FILE, ./agent.toml, ~/.config/backend.ai/agent.toml,
/etc/backend.ai/agent.toml (the first that exists).`

// nodeState loads the config (--config, or found in Backend.AI's usual
// places) and takes a one-shot snapshot of the node. A config that breaks
// the agent's rules is returned with its problems; one that does not load
// at all is a usage error.
//
// roots lists the scratch roots that could not be read or do not exist
// (each already warned about on stderr): the kernels under them are
// unseen, so whatever the snapshot says they hold is not the node's truth.
func nodeState(ctx context.Context, src *sourceFlags, cmdName string) (cfg *agentconfig.Config, snap *model.Snapshot, roots nodeopen.Unseen, err error) {
	path, err := configPath(src, cmdName)
	if err != nil {
		return nil, nil, roots, err
	}
	cfg, err = agentconfig.Load(path)
	if cfg == nil {
		return nil, nil, roots, configErr(path, src.config == "", err)
	}
	snap, roots, err = nodeopen.Scan(ctx, src.settings(), cfg)
	if err != nil {
		return nil, nil, roots, src.sourceErr(err)
	}
	return cfg, snap, roots, nil
}

func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}

func newCheckCmd() *cobra.Command {
	var src sourceFlags
	var asJSON bool
	var schema string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check that Backend.AI main's agent loads and starts with agent.toml, and that the live node matches it (exit 0 ok, 1 drift or live state not checked, 2 the agent would not load or start)",
		Long: `Check the agent config and the live node against each other.

The whole file is judged the way Backend.AI main's agent loads it (its
schema and load rules: required tables, spellings, types, modes), then the
start-up checks the agent makes against the node's devices (a slot missing
from a manual agent's devices, over-allocation, a reservation larger than
the node). A file in the BEP-1044 draft's device-based format is refused:
main cannot load it, so an agent restarted with it does not start. The
draft's own rules (PR #8463, unmerged) are the ones that count only with
--schema bep-1044; --json always carries both loaders' verdicts.

Then every live kernel is compared with the effective partition: a kernel
holding shares on a device its agent does not own, in manual mode a device
no agent owns, more memory assigned than the host has, a device held beyond
its capacity. A scratch root that is missing or cannot be read means the
kernels under it were not seen: check then says the live state was not
checked, never "ok". So does a kernel's file that cannot be read or parsed
(each is listed as unread:).

--host-cpus and --host-mem check a config written for another node here.

Exit status: 0 the agent loads and starts with the file and the live state
matches; 1 drift (each problem names the device and the agent), or the live
state was not checked (a scratch root missing or unreadable, a kernel's
file that cannot be read or parsed); 2 the agent
would not load the file (with --schema bep-1044: the draft's agent would
not), or would stop at start-up on this node (every reason is listed), or
bad usage.

` + configHelp,
		Example: `  fgtop check --config /etc/backend.ai/agent.toml
  fgtop check --config agent.toml --devices mock-accelerator.toml --host-cpus 0-63 --host-mem 512g
  fgtop check --config draft.toml --schema bep-1044`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sch, err := partition.ParseSchema(schema)
			if err != nil {
				return usageErr("%w", err)
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			cfg, snap, roots, err := nodeState(ctx, &src, "check")
			if err != nil {
				return err
			}
			return runCheck(cmd.OutOrStdout(), cfg, snap, len(roots.Blind)+len(roots.Absent), sch, asJSON)
		},
	}
	src.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&schema, "schema", "main", "whose loader decides: main (Backend.AI main, what an agent runs today) or bep-1044 (the unmerged draft, PR #8463)")
	return cmd
}

// planSchema names plan --json's document, as fgtop.snapshot/v1 and
// fgtop.replay/v1 name theirs: a script that reads several of fgtop's
// documents tells them apart by it.
const planSchema = "fgtop.plan/v1"

// planDoc is plan --json's document: the schema's name, then the plan's
// own members.
type planDoc struct {
	Schema string `json:"schema"`
	*partition.Plan
}

// runCheck prints partition.Check's verdict on cfg under schema and maps
// its class to the exit status. unseen counts the scratch roots that are
// missing or could not be read.
func runCheck(w io.Writer, cfg *agentconfig.Config, snap *model.Snapshot, unseen int, schema partition.Schema, asJSON bool) error {
	res := partition.Check(cfg, snap, unseen, schema)
	if asJSON {
		jsonout.Write(w, &res.Report)
	} else {
		res.WriteText(w)
	}
	switch res.Class {
	case partition.CheckRefused:
		return &exitError{code: exitBadUsage, err: errors.New(res.Reason)}
	case partition.CheckFinding:
		return &exitError{code: exitProblem, err: errors.New(res.Reason)}
	}
	return nil
}

// buildPlan loads everything and plans the flags' change
// (partition.PlanChange); a change that cannot be planned as given is a
// usage error.
//
// blind is nodeState's: a plan made without seeing every scratch root says
// so among its warnings, since it cannot tell which moved devices are held.
func buildPlan(ctx context.Context, src *sourceFlags, ch *changeFlags, cmdName string) (p *partition.Plan, blind []string, err error) {
	p, err = partition.PlanChange(ch.change(), func() (*agentconfig.Config, *model.Snapshot, []string, error) {
		cfg, snap, roots, err := nodeState(ctx, src, cmdName)
		blind = roots.Blind
		return cfg, snap, roots.Blind, err
	})
	var bad *partition.ChangeError
	if errors.As(err, &bad) {
		return nil, nil, usageErr("%w", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return p, blind, nil
}

func newPlanCmd() *cobra.Command {
	var src sourceFlags
	var ch changeFlags
	var rf replayFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what a partition change would do, without writing anything (exit 2 if it is invalid)",
		Long: `Plan a partition change and print it: the devices that change owner with the
live kernels still holding them, what each agent gains and loses, what does
not change, the exact file edits (every other byte of agent.toml stays as it
is), and every reason the change is invalid, in the agent's own words.

An edit keeps the file's format. A file without allocation tables (shared,
auto-split) gets Backend.AI main's slot-based form when manual mode writes
them (cpu = a core count, devices = { "cuda.shares" = "2.0" }); the BEP-1044
device-based form, which main cannot load, only with --format device-based.

In the slot-based form each agent is given amounts, not devices (devices are
not exclusive there): --slot AGENT=SLOT=AMOUNT sets one, e.g.
--slot i-node-a=cuda.shares=1.5, --slot i-node-a=cpu=15, --slot i-node-a=mem=64G.
A slot the node does not register is refused (exit 2), naming the node's
slots. Every agent must keep an amount for every slot the node's plugins
register, and per slot the agents' amounts must fit the node (the agent
stops at start-up otherwise): the plan says so in the agent's words.

Nothing is written. Exit status: 0 valid (or no change), 2 invalid or bad usage;
with --replay or --arrivals, 1 when some session would not have started (with no
change flag: when the rules would have refused some the record saw run).

` + configHelp,
		Example: `  fgtop plan --config /etc/backend.ai/agent.toml --move cuda:GPU-1234=i-node-b
  fgtop plan --config agent.toml --slot i-node-a=cuda.shares=1.5 --slot i-node-b=cuda.shares=2.5
  fgtop plan --config agent.toml --mode manual --cpu i-node-a=0-7,16 --mem i-node-a=64G
  fgtop plan --config agent.toml --from draft.toml --devices mock-accelerator.toml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// plan writes nothing: a signal ends it within forceAfter
			// even mid-replay, which does not stop on ctx.
			ctx, stop := notifyStop(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if on, err := rf.on(); err != nil || on {
				if err != nil {
					return err
				}
				return runPlanReplay(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), &src, &ch, &rf, asJSON)
			}
			p, _, err := buildPlan(ctx, &src, &ch, "plan")
			if err != nil {
				return err
			}
			if asJSON {
				jsonout.Write(cmd.OutOrStdout(), planDoc{planSchema, p})
			} else {
				p.WriteText(cmd.OutOrStdout())
			}
			if why := p.Invalid(); why != "" {
				return &exitError{code: exitBadUsage, err: errors.New(why)}
			}
			return nil
		},
	}
	src.register(cmd)
	ch.register(cmd)
	rf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON (with --replay: the fgtop.replay/v1 document)")
	return cmd
}

// stdinIsTerminal reports whether someone can answer a prompt. It asks
// the terminal itself: /dev/null (cron, ssh -n) is a character device too,
// and a prompt there read an empty answer and exited 1.
func stdinIsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && local.IsTerminal(f)
}

// confirm asks on the terminal (prompt.Confirm); without one, --yes is
// required (exit 2); an answer other than yes is exit 1, and so is ctx
// ending (signalContext's Ctrl-C or SIGTERM) while it asks.
func confirm(ctx context.Context, cmd *cobra.Command, yes bool, question string) error {
	if yes {
		return nil
	}
	err := prompt.Confirm(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), stdinIsTerminal(cmd.InOrStdin()), question)
	switch {
	case errors.Is(err, prompt.ErrNoTerminal):
		return usageErr("%w", err)
	case err != nil:
		return &exitError{code: exitProblem, err: err}
	}
	return nil
}

// restartFlags are --restart-cmd and its bound, --restart-timeout.
type restartFlags struct {
	cmd     string
	timeout time.Duration
}

func (f *restartFlags) register(cmd *cobra.Command, after string) {
	fl := cmd.Flags()
	fl.StringVar(&f.cmd, "restart-cmd", "", "command to run (sh -c) after "+after+", e.g. 'systemctl restart backendai-agent'")
	fl.DurationVar(&f.timeout, "restart-timeout", 2*time.Minute, "stop --restart-cmd (and whatever it started) when it runs longer than this; exit 3")
}

// validate refuses a --restart-timeout that could not run the command,
// before anything is written: found after the write, it left the file
// applied and the agent not restarted. It is refused without
// --restart-cmd too: a script's bad value is found the first time it
// runs, not the first time it names a command.
func (f *restartFlags) validate() error {
	if f.timeout <= 0 {
		return usageErr("--restart-timeout %s: want a positive duration (2m, 30s)", f.timeout)
	}
	return nil
}

// restart says a restart is needed, or runs --restart-cmd within
// --restart-timeout (engine/restart); ctx is the command's, ended by
// SIGINT and SIGTERM: they stop it too. Its failure is exit 3.
func restart(ctx context.Context, cmd *cobra.Command, f restartFlags, config string) error {
	if f.cmd != "" {
		if err := f.validate(); err != nil {
			return err
		}
	}
	err := agentrestart.Run(ctx, agentrestart.Options{Cmd: f.cmd, Timeout: f.timeout, Config: config,
		Stdin: cmd.InOrStdin(), Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
	if err != nil {
		return &exitError{code: exitRestartFailed, err: err}
	}
	return nil
}

func newApplyCmd() *cobra.Command {
	var src sourceFlags
	var ch changeFlags
	var rf replayFlags
	var yes, force bool
	var rs restartFlags
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Apply a partition change to agent.toml: validated, atomic, backed up, journaled (needs --yes when not interactive)",
		Long: `Plan a partition change (the same flags as plan), show the plan, and write it.

Refuses, leaving the file untouched, when the plan is invalid, when the file
changed on disk since it was read, or without --yes when stdin is not a
terminal; and, unless --force, when live kernels hold a device that would
move or more than their agent's new amount (or would, if kernels whose agent
cannot be told are its), when a scratch root or a kernel file cannot be read,
or when a manual partition's accelerator amounts change while the node's GPUs
or their capacities are unknown (the agent's start-up checks on them cannot
be run: check says "not ok"), or when agent.toml is read-only (its owner may
not write it: --force writes it and keeps the mode).
Otherwise: only the values that change are rewritten; the file is written to
a temp file in the same directory, synced and renamed over agent.toml; the
previous version is kept beside it (agent.toml.fgtop-<time>.bak); the result
is read back and checked against the plan; a journal line is appended
(agent.toml.fgtop-journal.jsonl). "fgtop rollback" undoes it.

The agent reads agent.toml only at start-up: --restart-cmd CMD runs CMD (with
sh -c) after a successful apply and shows its output, stopped (with what it
started) after --restart-timeout. With nothing to apply, it is not run: the
file already says what was asked, and whether the agent was restarted since
it was written is not known here.

Exit status: 0 applied (or nothing to apply), 1 not confirmed, refused or failed (nothing
written), 2 an invalid plan or bad usage, 3 applied but --restart-cmd failed.

` + configHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := rs.validate(); err != nil {
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			if rf.arrivals != "" || cmd.Flags().Changed("arrivals") {
				// rf.on() takes it for a replay, which asked for
				// --suggest, which --arrivals then refused: a loop.
				return usageErr("apply does not take --arrivals: a file's sessions are replayed with plan --arrivals FILE and the change flags; apply those change flags without it")
			}
			if on, err := rf.on(); err != nil {
				return err
			} else if on {
				if !rf.suggest {
					return usageErr("apply --replay applies only what --suggest finds: add --suggest, or see the replay with plan --replay")
				}
				flags, sg, _, err := suggestSlotsThen(ctx, &src, &ch, &rf, "apply", nil)
				if err != nil {
					return err
				}
				sg.WriteText(cmd.OutOrStdout(), flags)
				ch.slots = flags
			}
			p, blind, err := buildPlan(ctx, &src, &ch, "apply")
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			p.WriteText(out)
			switch v, why := partition.JudgeApply(p, len(blind), force); v {
			case partition.ApplyInvalid:
				return &exitError{code: exitBadUsage, err: errors.New(why)}
			case partition.ApplyNothing:
				fmt.Fprintln(out, why)
				if rs.cmd != "" {
					// An apply whose restart failed, run again: the
					// file is written, the agent maybe not restarted.
					fmt.Fprintf(out, "--restart-cmd not run: nothing was written. If the agent was not restarted since %s last changed (an earlier restart command that failed), restart it: it reads the file only at start-up\n", p.Config)
				}
				return nil
			case partition.ApplyRefused:
				return &exitError{code: exitProblem, err: errors.New(why)}
			}
			if h, held := partition.DraftHolder(p.Config); held {
				fmt.Fprintln(cmd.ErrOrStderr(), partition.DraftStaleNote(h))
			}
			if err := confirm(ctx, cmd, yes, fmt.Sprintf("apply %d change(s) to %s?", len(p.Edits), p.Config)); err != nil {
				return err
			}
			res, err := partition.Apply(p, partition.ApplyOptions{Actor: agentconfig.LocalOperator(), Force: force, ReadOnlyOK: force})
			if res != nil {
				partition.WriteApplied(out, &res.CommitResult)
			}
			if err != nil {
				return &exitError{code: exitProblem, err: err}
			}
			fmt.Fprintln(out, partition.Verified)
			// The path as given, as rollback's (a link on it counts).
			return restart(ctx, cmd, rs, p.Config)
		},
	}
	src.register(cmd)
	ch.register(cmd)
	rf.register(cmd)
	fl := cmd.Flags()
	// plan's flag, refused here: not offered in apply's help.
	_ = fl.MarkHidden("arrivals")
	fl.BoolVar(&yes, "yes", false, "do not ask for confirmation (required when stdin is not a terminal)")
	fl.BoolVar(&force, "force", false, "apply even when live kernels hold devices that move or more than their agent's planned amount, what the change affects could not all be checked, or agent.toml is read-only (its mode is kept)")
	rs.register(cmd, "applying")
	return cmd
}

func newRollbackCmd() *cobra.Command {
	var src sourceFlags
	var yes, force bool
	var rs restartFlags
	cmd := &cobra.Command{
		Use: "rollback",
		// What an operator may type for it: cobra then says "Did you
		// mean this? rollback".
		SuggestFor: []string{"undo", "revert", "restore"},
		Short:      "Restore agent.toml as it was before the last apply (atomic and journaled; needs --yes when not interactive)",
		Long: `Restore the version of agent.toml from before the last apply that is still in
effect (the journal is replayed: an apply pushes, a rollback pops), byte for
byte, with the same safety as apply: atomic write, a backup of the current
version, a journal line. Refuses when the file changed since that apply
(--force restores anyway; the current file is backed up first) or when the
backup does not match the hash recorded; and, unless --force, as apply
does, when live kernels hold a device that would move or more than their
agent's restored amount, or when a scratch root or a kernel file cannot be
read, or when agent.toml is read-only (--force writes it, keeping the mode). A restored version that fails the agent's start-up checks on this
node (a slot given more than the node has), or that cannot be checked
against its GPUs, is said on stderr before it asks: an agent restarted
with a failing one will not start.

The journal is keyed on the file's resolved path, so any spelling of it
(relative, absolute, through a symlink) finds the applies made with another.

Exit status: 0 restored, 1 refused or failed (nothing written), 2 bad usage, 3 restored but
--restart-cmd failed.

` + configHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := rs.validate(); err != nil {
				return err
			}
			config, err := configPath(&src, "rollback")
			if err != nil {
				return err
			}
			if _, err := os.Stat(config); err != nil {
				return configErr(config, src.config == "", err)
			}
			out := cmd.OutOrStdout()
			top, err := agentconfig.Undoable(config, "")
			// Said whatever Undoable found: a skipped line may be the
			// record of an apply or a rollback.
			if w := agentconfig.JournalWarning(config, ""); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "fgtop: warning: "+w)
			}
			if err != nil {
				return &exitError{code: exitProblem, err: err}
			}
			partition.WriteUndoing(out, top)
			if v := partition.RestoreVerdict(top); v != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "fgtop: warning: "+v)
			}
			// The restored partition is judged as apply judges a plan:
			// the live kernels it would strand, the start-up checks.
			ctx, stop := signalContext(cmd)
			defer stop()
			var j partition.RestoreJudgement
			var bad *nodeopen.InputError
			if cfg, snap, roots, err := nodeState(ctx, &src, "rollback"); errors.As(err, &bad) {
				// A flag's bad value (an unknown agent in --scratch-root
				// AGENT=DIR) is the caller's mistake, not a node that
				// cannot be judged: --force does not pass it.
				return err
			} else if err != nil {
				j = partition.JudgeRestoreUnscanned(config, err, force)
			} else {
				j = partition.JudgeRestore(top, cfg, snap, len(roots.Blind), force)
			}
			for _, w := range j.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "fgtop: warning: "+w)
			}
			partition.WriteRestoreAffected(out, j)
			if j.Refusal != "" {
				return &exitError{code: exitProblem, err: errors.New(j.Refusal)}
			}
			if err := confirm(ctx, cmd, yes, fmt.Sprintf("restore %s?", config)); err != nil {
				return err
			}
			res, err := agentconfig.Rollback(agentconfig.RollbackRequest{Path: config, Actor: agentconfig.LocalOperator(), Force: force})
			if err != nil {
				return &exitError{code: exitProblem, err: err}
			}
			partition.WriteRestored(out, res)
			if len(res.Mismatch) > 0 {
				return &exitError{code: exitProblem, err: fmt.Errorf("restored, but: %s", strings.Join(res.Mismatch, "; "))}
			}
			// As given, not res.Path (its links resolved): a link on it
			// retargeted since the agent started says it read another file.
			return restart(ctx, cmd, rs, config)
		},
	}
	src.register(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&yes, "yes", false, "do not ask for confirmation (required when stdin is not a terminal)")
	fl.BoolVar(&force, "force", false, "roll back even when the file changed since the apply, live kernels hold devices that move or more than their agent's restored amount, or agent.toml is read-only (its mode is kept)")
	rs.register(cmd, "restoring")
	return cmd
}
