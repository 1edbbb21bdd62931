package engine

import (
	"context"
	"sync"
	"time"

	"github.com/fgtop/fgtop/engine/agenthealth"
	"github.com/fgtop/fgtop/model"
)

// firstHealthWait is how long Run waits for the first round of checks
// before it goes on without them.
const firstHealthWait = 300 * time.Millisecond

// healthTarget is one agent whose /health is asked.
type healthTarget struct {
	id   model.AgentID
	addr string
}

// healthOn says whether the agents' /health is checked: they come from an
// agent.toml, run on this host (or answer as if: SimulatedHealth), and the
// caller did not turn it off.
func (o *Options) healthOn() bool {
	return o.ConfigPath != "" && (!o.NoProcs || o.SimulatedHealth) && !o.NoHealth
}

// healthTargets lists the agents with a service address.
func (s *state) healthTargets() []healthTarget {
	var out []healthTarget
	for _, a := range s.agents {
		if a.base.ServiceAddr != "" {
			out = append(out, healthTarget{a.base.ID, a.base.ServiceAddr})
		}
	}
	return out
}

// checkAll asks every target at once; it returns when the slowest answers
// or its check times out.
func checkAll(ctx context.Context, c *agenthealth.Checker, ts []healthTarget) map[model.AgentID]model.AgentHealth {
	out := make(map[model.AgentID]model.AgentHealth, len(ts))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := c.Check(ctx, t.addr)
			mu.Lock()
			out[t.id] = h
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// watchHealth checks the targets every HealthEvery, and at once when the
// targets change (a config change), off the engine's state goroutine: a
// hung agent delays no snapshot, only the end of its round (at most
// HealthTimeout). It sends what it finds when it differs from the last
// sent.
func (e *Engine) watchHealth(ctx context.Context, targets <-chan []healthTarget, out chan map[model.AgentID]model.AgentHealth, ts []healthTarget) {
	c := agenthealth.NewChecker(e.opts.HealthTimeout)
	defer c.Close()
	var last map[model.AgentID]model.AgentHealth
	check := func() {
		if h := checkAll(ctx, c, ts); ctx.Err() == nil && !sameHealth(h, last) && sendLatest(ctx, out, h) {
			last = h
		}
	}
	check()
	t := time.NewTicker(e.opts.HealthEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			check()
		case ts = <-targets:
			check()
		}
	}
}

func sameHealth(a, b map[model.AgentID]model.AgentHealth) bool {
	if len(a) != len(b) || a == nil != (b == nil) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// setHealth records the agents' health; it reports whether it changed.
func (s *state) setHealth(h map[model.AgentID]model.AgentHealth) bool {
	if sameHealth(h, s.health) {
		return false
	}
	s.health = h
	return true
}

// offerTargets replaces what the health watcher checks, never blocking.
func offerTargets(ch chan []healthTarget, ts []healthTarget) {
	select {
	case <-ch:
	default:
	}
	select {
	case ch <- ts:
	default:
	}
}
