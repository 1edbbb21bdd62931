package placement

import (
	"fmt"
	"strings"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

// SettingsText are allocator settings as an operator types them (the
// CLI's --strategy, --affinity, --quantum, --no-fragmentation and
// --allocation-order of simulate and fleet); "" leaves a setting to
// whatever the node says.
type SettingsText struct {
	Strategy string
	// Affinity is interleaved or prefer-single-node (prefer_single_node
	// as agent.toml spells it also reads).
	Affinity string
	// Quantum is a decimal above zero.
	Quantum         string
	NoFragmentation bool
	// Order lists device plugins, comma-separated; blank names are
	// skipped.
	Order string
}

// ParseSettings reads t into Settings; the defaults that depend on the
// node are filled in later. Every error is the operator's, worded with
// the flag it came from ("--strategy \"x\": want evenly or fill").
func ParseSettings(t SettingsText) (Settings, error) {
	var s Settings
	var err error
	if s.Strategy, err = alloc.ParseStrategy(t.Strategy); err != nil {
		return s, fmt.Errorf("--strategy %q%s: want evenly or fill", t.Strategy, model.DidYouMean(t.Strategy, []string{"evenly", "fill"}))
	}
	if t.Affinity != "" {
		if s.Policy, err = alloc.ParseAffinityPolicy(strings.ReplaceAll(t.Affinity, "-", "_")); err != nil {
			return s, fmt.Errorf("--affinity %q%s: want interleaved or prefer-single-node", t.Affinity, model.DidYouMean(t.Affinity, []string{"interleaved", "prefer-single-node"}))
		}
	}
	if t.Quantum != "" {
		q, err := model.ParseDec(t.Quantum)
		if err != nil || !q.IsFinite() || q.Sign() <= 0 {
			return s, fmt.Errorf("--quantum %q: want a decimal > 0 such as 0.01", t.Quantum)
		}
		s.Quantum = q
	}
	s.ForbidFragmentation = t.NoFragmentation
	if t.Order != "" {
		s.Order = []model.DeviceName{}
		for _, n := range strings.Split(t.Order, ",") {
			if n = strings.TrimSpace(n); n != "" {
				s.Order = append(s.Order, model.DeviceName(n))
			}
		}
	}
	return s, nil
}
