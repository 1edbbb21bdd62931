package plugin

import (
	"context"
	"fmt"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// MockEntry is the mock plugin's entry-point name: its settings live under
// config/plugins/accelerator/mock/ (domain notes §4.3; the rst
// documentation's <slot_name> is wrong for it).
const MockEntry = "mock"

// MockRefusedError is a mock setting the plugin refuses (the agent stops
// at start-up): bad input, as in a --mock-etcd file.
type MockRefusedError struct {
	// Agent is the agent whose node scope over the global one gives the
	// value; "" for the global scope alone.
	Agent model.AgentID
	Err   error
}

func (e *MockRefusedError) Error() string {
	if e.Agent != "" {
		return fmt.Sprintf("the mock plugin's settings in etcd, as agent %s reads them (its node scope over the global one): %v", e.Agent, e.Err)
	}
	return fmt.Sprintf("the mock plugin's settings in etcd: %v", e.Err)
}

func (e *MockRefusedError) Unwrap() error { return e.Err }

// ReadMockSettings reads the mock plugin's settings as its agents do,
// from o's etcd (o.Entry is set to MockEntry; each agent's node scope over
// the global one). Settings that cannot be read, or that the agents' scopes
// make register differently (one mock device list serves them all), are
// the plugin's defaults, said (inventory.UnreadMockSettings); a value the
// plugin refuses is a *MockRefusedError.
func ReadMockSettings(ctx context.Context, o EtcdOptions) (*inventory.MockSettings, error) {
	o.Entry = MockEntry
	per, err := ReadEtcdFlat(ctx, o)
	if err != nil {
		return inventory.UnreadMockSettings(err.Error()), nil
	}
	// Each agent's settings are checked as the plugin checks them (one
	// the plugin refuses stops that agent), then compared by what they
	// register, as the CUDA plugin's are (registersDiffer): keys spelled
	// otherwise ("40g", "40960m") or that register nothing (the mock's
	// device_mask only hides statistics) are alike.
	var first *inventory.MockSettings
	for _, a := range append([]model.AgentID{""}, o.Agents...) {
		kv, ok := per[a]
		if !ok {
			continue
		}
		s, err := inventory.MockSettingsFromEtcd(o.Where(), kv)
		if err != nil {
			return nil, &MockRefusedError{Agent: a, Err: err}
		}
		if first == nil {
			first = s
		} else if !sameMockRegistration(first, s) {
			return inventory.UnreadMockSettings("the agents' node scopes set them differently, and one mock device list serves them all"), nil
		}
	}
	return first, nil
}

// sameMockRegistration: a and b make the mock plugin register the same
// slots and capacities (its mode; in fractional mode its units and
// quantum).
func sameMockRegistration(a, b *inventory.MockSettings) bool {
	if a.Mode() != b.Mode() {
		return false
	}
	if a.Mode() != inventory.ModeFractional {
		return true
	}
	return a.UnitMem == b.UnitMem && a.UnitProc == b.UnitProc && a.QuantumSize.Cmp(b.QuantumSize) == 0
}
