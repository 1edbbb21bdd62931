package placement

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// skipListed is how many devices and kernels a SkipLines line names
// before "and N more".
const skipListed = 4

// SkipLines words the live allocations a simulation could not load, one
// line per plugin and reason (with the amounts where it is one kernel's)
// rather than one per kernel and device: a node
// whose kernels hold cores this machine lacks (a tree copied from
// another host) would otherwise print a line for every core of every
// kernel. Lines come in the order their first entry does.
func SkipLines(skips []KernelSkip) []string {
	type group struct {
		plugin, why string
		devices     []string
		held        []string // "AMOUNT on DEVICE", said where one kernel is
		kernels     []model.KernelID
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for _, sk := range skips {
		plugin := string(sk.Slot.DeviceName())
		k := [2]string{plugin, sk.Why}
		g := byKey[k]
		if g == nil {
			g = &group{plugin: plugin, why: sk.Why}
			byKey[k] = g
			groups = append(groups, g)
		}
		d := plugin + ":" + string(sk.Device)
		if !slices.Contains(g.devices, d) {
			g.devices = append(g.devices, d)
		}
		g.held = append(g.held, sk.Amount.String()+" on "+d)
		if !slices.Contains(g.kernels, sk.Kernel) {
			g.kernels = append(g.kernels, sk.Kernel)
		}
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		kernels := make([]string, len(g.kernels))
		for i, k := range g.kernels {
			kernels[i] = string(k)
		}
		where := listed("on", g.devices)
		if len(g.kernels) == 1 {
			where = listed("", g.held)
		}
		out = append(out, fmt.Sprintf("%s of %s not loaded: %s (%s; %s)",
			g.plugin, count(len(g.kernels), "kernel"), g.why, where, listed("kernels", kernels)))
	}
	return out
}

// count is "1 kernel" or "n kernels".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// listed is "lead a, b, c, d and 3 more" (skipListed named; no lead
// when it is "").
func listed(lead string, items []string) string {
	if lead != "" {
		lead += " "
	}
	if len(items) <= skipListed {
		return lead + strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s%s and %d more", lead, strings.Join(items[:skipListed], ", "), len(items)-skipListed)
}
