package alloc

import (
	"slices"

	"github.com/fgtop/fgtop/model"
)

// The direct transcription of get_current_allocations that ordered()
// replaced (it sorts and sums per call); TestOrderedMatchesReference
// checks the two agree.

// refOrdered is get_current_allocations(affinity_hint, slot_name): the slot's
// devices in the priority order the allocators walk. The sorting works on
// positions into one slice of devices, which keeps it cheap for 64+ cores.
func (c *core) refOrdered(hint *AffinityHint, slot model.SlotName) []devAlloc {
	idxs := c.slotDevs(slot)
	all := make([]devAlloc, len(idxs))
	for k, i := range idxs {
		all[k] = devAlloc{idx: i, id: c.devs[i].ID, alloc: c.alloc[i], free: c.devs[i].Capacity.Sub(c.alloc[i])}
	}
	byFree := func(ps []int) {
		// sorted(..., key=capacity - alloc, reverse=True): most free
		// first, ties in their current order.
		slices.SortStableFunc(ps, func(a, b int) int { return all[b].free.Cmp(all[a].free) })
	}
	positions := make([]int, len(all))
	for k := range positions {
		positions[k] = k
	}
	var order []int
	switch {
	case hint == nil:
		// Legacy path: every device by free capacity.
		byFree(positions)
		order = positions
	case len(hint.Devices) == 0:
		// First device type of a run: one cluster per NUMA node (the
		// connected components over weight-0 edges), least loaded
		// cluster first, most free device first within a cluster.
		clusters := c.refGroupByNUMA(all, positions)
		refSortClusters(clusters, all)
		for _, cl := range clusters {
			byFree(cl)
		}
		if hint.Policy == PreferSingleNode {
			order = make([]int, 0, len(all))
			for _, cl := range clusters {
				order = append(order, cl...)
			}
		} else {
			order = refInterleaveLongest(clusters, len(all))
		}
	default:
		// A later device type: the devices on the NUMA nodes the previous
		// type used (primary sets, interleaved whatever the policy), then
		// every other device (the secondary set).
		nodes := hintNodes(hint.Devices)
		primary := make([][]int, len(nodes))
		var secondary []int
		for _, p := range positions {
			k := numaKey(c.devs[all[p].idx].NUMANode)
			if n := slices.Index(nodes, k); n >= 0 {
				primary[n] = append(primary[n], p)
			} else {
				secondary = append(secondary, p)
			}
		}
		refSortClusters(primary, all)
		for _, ps := range primary {
			byFree(ps)
		}
		byFree(secondary)
		order = append(refInterleaveLongest(primary, len(all)), secondary...)
	}
	out := make([]devAlloc, len(order))
	for k, p := range order {
		out[k] = all[p]
	}
	return out
}

// refGroupByNUMA splits device positions into clusters of equal NUMA node,
// clusters in the order their first device appears (networkx's
// connected_components order over the affinity graph's insertion-ordered
// nodes).
func (c *core) refGroupByNUMA(all []devAlloc, positions []int) [][]int {
	var keys []int
	var clusters [][]int
	for _, p := range positions {
		k := numaKey(c.devs[all[p].idx].NUMANode)
		n := slices.Index(keys, k)
		if n < 0 {
			n = len(keys)
			keys = append(keys, k)
			clusters = append(clusters, nil)
		}
		clusters[n] = append(clusters[n], p)
	}
	return clusters
}

// refSortClusters orders clusters by the total already allocated on them,
// lowest first, then by size, largest first; the sort is stable.
func refSortClusters(clusters [][]int, all []devAlloc) {
	if len(clusters) < 2 {
		return
	}
	totals := make([]model.Dec, len(clusters))
	for i, cl := range clusters {
		t := model.Zero
		for _, p := range cl {
			t = t.Add(all[p].alloc)
		}
		totals[i] = t
	}
	order := make([]int, len(clusters))
	for i := range order {
		order[i] = i
	}
	// networkx hands the components over sorted by (distance, -size), so
	// among equally loaded clusters the larger comes first.
	slices.SortStableFunc(order, func(a, b int) int {
		if c := totals[a].Cmp(totals[b]); c != 0 {
			return c
		}
		return len(clusters[b]) - len(clusters[a])
	})
	sorted := make([][]int, len(clusters))
	for i, o := range order {
		sorted[i] = clusters[o]
	}
	copy(clusters, sorted)
}

// refInterleaveLongest is more_itertools.interleave_longest: one element from
// each list in turn, skipping exhausted lists.
func refInterleaveLongest(lists [][]int, total int) []int {
	out := make([]int, 0, total)
	for i := 0; ; i++ {
		took := false
		for _, l := range lists {
			if i < len(l) {
				out = append(out, l[i])
				took = true
			}
		}
		if !took {
			return out
		}
	}
}
