package partition

import (
	"fmt"
	"strings"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

// Change is a partition change as an operator types it: the values of
// the CLI's --move, --mode, --cpu, --mem, --slot, --from and --format, as
// given (repeatable flags in their order).
type Change struct {
	Moves  []string
	Mode   string
	CPU    []string
	Mem    []string
	Slots  []string
	From   string
	Format string
}

// ParseChange turns c into a Request. Every error is the operator's
// mistake in the values' syntax, worded with the flag it came from
// ("--mem \"a=x\": ..."): the CLI refuses it as bad usage. Whether the
// agents, devices and amounts exist on the node is the plan's to say.
func ParseChange(c Change) (Request, error) {
	var req Request
	format, err := agentconfig.ParseFormat(c.Format)
	if err != nil {
		return req, fmt.Errorf("--format %w", err)
	}
	req.Format = format
	switch c.Mode {
	case "", agentconfig.ModeShared, agentconfig.ModeAutoSplit, agentconfig.ModeManual:
		req.Mode = c.Mode
	default:
		return req, fmt.Errorf("--mode %q: want shared, auto-split or manual", c.Mode)
	}
	for _, m := range c.Moves {
		dev, agent, ok := strings.Cut(m, "=")
		if !ok || dev == "" || agent == "" {
			return req, fmt.Errorf("--move %q: want DEVICE=AGENT, e.g. cuda:GPU-1234=i-node-a", m)
		}
		req.Moves = append(req.Moves, Move{Device: dev, Agent: model.AgentID(agent)})
	}
	// An agent's slot given twice (--slot twice, or --slot mem and --mem)
	// would be written with the last value, silently: the operator meant
	// one of them, and fgtop cannot tell which.
	given := map[[2]string]string{}
	twice := func(agent, slot, flag string) error {
		k := [2]string{agent, slot}
		if first, ok := given[k]; ok {
			return fmt.Errorf("%s: %s's %s is given twice (%s, then %s): give it once", flag, agent, slot, first, flag)
		}
		given[k] = flag
		return nil
	}
	for _, v := range c.CPU {
		// The last "=": a core list has none, an agent id may.
		i := strings.LastIndexByte(v, '=')
		agent, spec, ok := v[:max(i, 0)], v[i+1:], i >= 0
		if !ok || agent == "" || spec == "" {
			return req, fmt.Errorf("--cpu %q: want AGENT=0-7,16 (or AGENT=COUNT in the slot-based format)", v)
		}
		if !coreListSyntax(spec) {
			return req, fmt.Errorf("--cpu %q: %q is not a list of cores such as 0-7,16 (nor a core count, as the slot-based format takes)", v, spec)
		}
		if err := twice(agent, "cpu", "--cpu "+v); err != nil {
			return req, err
		}
		req.CPU = append(req.CPU, CPUSet{Agent: model.AgentID(agent), Spec: spec})
	}
	for _, v := range c.Mem {
		// The last "=": a size has none, an agent id may.
		i := strings.LastIndexByte(v, '=')
		agent, size, ok := v[:max(i, 0)], v[i+1:], i >= 0
		if !ok || agent == "" || size == "" {
			return req, fmt.Errorf("--mem %q: want AGENT=SIZE, e.g. i-node-a=64G", v)
		}
		// The console's mem field reads sizes the same way.
		b, _, err := ParseMem(size)
		if err != nil {
			return req, fmt.Errorf("--mem %q: %w", v, err)
		}
		if b.Sign() <= 0 {
			return req, fmt.Errorf("--mem %q: %s is not above zero: write the agent's memory, e.g. %s=64G", v, size, agent)
		}
		if err := twice(agent, "mem", "--mem "+v); err != nil {
			return req, err
		}
		req.Mem = append(req.Mem, MemSet{Agent: model.AgentID(agent), Bytes: b, Text: size})
	}
	for _, v := range c.Slots {
		set, err := ParseSlotSet(v)
		if err != nil {
			return req, fmt.Errorf("--slot %q: %w", v, err)
		}
		if err := twice(string(set.Agent), string(set.Slot), "--slot "+v); err != nil {
			return req, err
		}
		req.Slots = append(req.Slots, set)
	}
	if c.From != "" {
		d, err := agentconfig.Load(c.From)
		if d == nil {
			// %v: a config that is nil has an error to say, but the
			// words must not depend on it being set.
			return req, fmt.Errorf("--from: %v", err)
		}
		// A draft that breaks rules is still a draft: the plan lists them.
		req.From = d
	}
	return req, nil
}

// coreListSyntax reports whether spec reads as --cpu takes it: core
// numbers and LOW-HIGH ranges, comma-separated (a lone number is also the
// slot-based format's core count). Whether the cores exist is the plan's
// to say; a spec that is not even numbers is bad usage.
func coreListSyntax(spec string) bool {
	digits := func(s string) bool {
		if s == "" || len(s) > 9 {
			return false
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return false
			}
		}
		return true
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		if !digits(lo) || (isRange && !digits(hi)) {
			return false
		}
	}
	return true
}

// NodeReader reads the node a change is planned on: its config, a
// snapshot, and the scratch roots that could not be read (the plan warns
// that it cannot tell which moved devices their kernels hold).
type NodeReader func() (cfg *agentconfig.Config, snap *model.Snapshot, blind []string, err error)

// ChangeError is a change that cannot be planned as the operator gave it:
// its syntax (ParseChange's error), a slot the node does not register,
// or Propose's refusal. The CLI refuses it as bad usage.
type ChangeError struct{ Err error }

func (e *ChangeError) Error() string { return e.Err.Error() }

func (e *ChangeError) Unwrap() error { return e.Err }

// PlanChange parses c and plans it (Propose) on the node read gives; the
// node's own error is returned as read gives it. A --slot whose amount
// does not parse may name a slot the node does not have (memory=64G): that
// typo is what is said then, where the node can be read, rather than the
// amount's syntax.
func PlanChange(c Change, read NodeReader) (*Plan, error) {
	req, err := ParseChange(c)
	if err != nil {
		if len(c.Slots) > 0 {
			if cfg, snap, _, rerr := read(); rerr == nil && cfg != nil {
				if v, serr := UnknownSlotIn(c.Slots, cfg, snap); serr != nil {
					return nil, &ChangeError{fmt.Errorf("--slot %s: %w", v, serr)}
				}
			}
		}
		return nil, &ChangeError{err}
	}
	cfg, snap, blind, err := read()
	if err != nil {
		return nil, err
	}
	p, err := Propose(cfg, snap, req, blind)
	if err != nil {
		return nil, &ChangeError{err}
	}
	return p, nil
}
