package ui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// kernelView is the kernels table's rows after following, filtering and
// sorting: recomputed when one of those or the snapshot changes, never per
// frame.
type kernelView struct {
	rows   []int    // indices into derived.kernels
	onDev  []string // what each row holds on the followed device
	onDevF []float64
	dev    int // followed device row, -1 for all kernels
}

// sortColumns are the kernel table's sortable columns, in display order.
func (p *kernelsPane) sortColumns() []string {
	cols := []string{"id", "agent"}
	if p.view.dev >= 0 {
		cols = append(cols, "on")
	}
	if p.d != nil {
		for _, s := range p.d.slotCols {
			cols = append(cols, slotKey(s))
		}
	}
	// The owner and use columns come last, so s cycles through the older
	// ones in the order it always did.
	return append(cols, "devices", "age", "state", "user", "type", "session", "util", "gmem")
}

// slotKey is a slot column's name in :sort and the s key's cycle.
func slotKey(s model.SlotName) string { return strings.ToLower(slotHeader(s)) }

// followedDevice is the device row the kernels table follows, or -1.
func (p *kernelsPane) followedDevice() int {
	// A search looks at every kernel: a match on another GPU is what the
	// operator is looking for, not "no kernel matches".
	if !p.follow || p.d == nil || p.filter != "" {
		return -1
	}
	if c := p.device(); c >= 0 && c < len(p.d.devs) {
		return c
	}
	return -1 // the cpu/mem line: every kernel
}

// refresh recomputes the kernels table rows.
func (p *kernelsPane) refresh() {
	p.invalidate()
	kv := kernelView{dev: p.followedDevice()}
	if p.d == nil {
		p.view = kv
		return
	}
	d := p.d
	var base []int
	on := map[int]int{} // kernel index -> position in the device's lists
	var onStr []string
	var onF []float64
	if kv.dev >= 0 {
		// A GPU in MIG mode stands for its instances.
		for _, di := range append([]int{kv.dev}, d.devs[kv.dev].children...) {
			r := &d.devs[di]
			for p, ki := range r.kernels {
				if q, ok := on[ki]; ok {
					onF[q] += r.onDevF[p]
					onStr[q] = strconv.FormatFloat(onF[q], 'f', -1, 64)
					continue
				}
				on[ki] = len(onStr)
				onStr = append(onStr, r.onDev[p])
				onF = append(onF, r.onDevF[p])
				base = append(base, ki)
			}
		}
		slices.Sort(base)
	} else {
		base = make([]int, len(d.kernels))
		for i := range base {
			base[i] = i
		}
	}
	filter := compileFilter(p.filter)
	rows := base[:0:0]
	for _, ki := range base {
		if filter.match(&d.kernels[ki]) {
			rows = append(rows, ki)
		}
	}
	if !slices.Contains(p.sortColumns(), p.sortCol) {
		p.sortCol = "id"
	}
	cmpf := p.kernelCmp(on, onF)
	slices.SortStableFunc(rows, func(x, y int) int {
		c := cmpf(x, y)
		if c == 0 {
			c = x - y
		} else if p.sortDesc {
			c = -c
		}
		return c
	})
	kv.rows = rows
	if kv.dev >= 0 {
		kv.onDev = make([]string, len(rows))
		kv.onDevF = make([]float64, len(rows))
		for i, ki := range rows {
			kv.onDev[i], kv.onDevF[i] = onStr[on[ki]], onF[on[ki]]
		}
	}
	p.view = kv
	p.matchDevs = nil
	if p.filter != "" {
		// The devices holding a match are marked in the devices pane.
		// One pass over the matches and one over the holdings, so a
		// search on a node of 10,000 kernels stays linear.
		hit := make([]bool, len(d.kernels))
		for _, ki := range rows {
			hit[ki] = true
		}
		p.matchDevs = make([]bool, len(d.devs))
		for i := range d.devs {
			p.matchDevs[i] = slices.ContainsFunc(d.devs[i].kernels, func(ki int) bool { return hit[ki] })
		}
		for i := range d.devs {
			for _, c := range d.devs[i].children {
				p.matchDevs[i] = p.matchDevs[i] || p.matchDevs[c]
			}
		}
	}
	if p.cursor >= len(rows) {
		p.cursor = max(len(rows)-1, 0)
	}
}

func stateRank(s model.KernelState) int {
	switch s {
	case model.KernelBroken:
		return 0
	case model.KernelStale:
		return 1
	case model.KernelPending:
		return 2
	}
	return 3
}

// kernelCmp compares two kernels (indices) by the sort column, ascending.
func (p *kernelsPane) kernelCmp(on map[int]int, onF []float64) func(x, y int) int {
	ks := p.d.kernels
	switch p.sortCol {
	case "agent":
		return func(x, y int) int { return cmp.Compare(ks[x].k.Agent, ks[y].k.Agent) }
	case "on":
		return func(x, y int) int { return cmp.Compare(onF[on[x]], onF[on[y]]) }
	case "devices":
		return func(x, y int) int {
			if c := cmp.Compare(ks[x].nDevs, ks[y].nDevs); c != 0 {
				return c
			}
			return cmp.Compare(ks[x].devs, ks[y].devs)
		}
	case "age":
		// Youngest first: the most recently seen.
		return func(x, y int) int { return ks[y].k.Seen.Compare(ks[x].k.Seen) }
	case "state":
		return func(x, y int) int { return cmp.Compare(stateRank(ks[x].k.State), stateRank(ks[y].k.State)) }
	case "user":
		return func(x, y int) int { return cmp.Compare(ks[x].w.fUser, ks[y].w.fUser) }
	case "type":
		return func(x, y int) int { return cmp.Compare(ks[x].w.fType, ks[y].w.fType) }
	case "session":
		return func(x, y int) int { return cmp.Compare(ks[x].w.fSession, ks[y].w.fSession) }
	case "util":
		// Idle first when ascending: what an operator hunts for.
		return func(x, y int) int {
			if ix, iy := ks[x].w.idle, ks[y].w.idle; ix != iy {
				if ix {
					return -1
				}
				return 1
			}
			return cmp.Compare(ks[x].w.utilF, ks[y].w.utilF)
		}
	case "gmem":
		return func(x, y int) int { return cmp.Compare(ks[x].w.gmemF, ks[y].w.gmemF) }
	case "id", "":
		return func(x, y int) int { return 0 }
	}
	for c, s := range p.d.slotCols {
		if slotKey(s) == p.sortCol {
			return func(x, y int) int { return cmp.Compare(ks[x].slotF[c], ks[y].slotF[c]) }
		}
	}
	return func(x, y int) int { return 0 }
}

// setSort sorts by col; the same column again flips the direction.
func (p *kernelsPane) setSort(col string, desc bool) bool {
	col = strings.ToLower(col)
	if !slices.Contains(p.sortColumns(), col) {
		return false
	}
	p.sortCol, p.sortDesc = col, desc
	p.refresh()
	return true
}

// cycleSort moves to the next sortable column.
func (p *kernelsPane) cycleSort() {
	cols := p.sortColumns()
	i := slices.Index(cols, p.sortCol)
	p.sortCol = cols[(i+1)%len(cols)]
	p.sortDesc = false
	p.refresh()
}

// setFilter shows only the kernels matching f ("" for all).
func (p *kernelsPane) setFilter(f string) {
	p.filter = f
	p.refresh()
}

// indexOf is the table's row of a kernel, or -1.
func (p *kernelsPane) indexOf(id model.KernelID) int {
	for j, k := range p.view.rows {
		if p.d.kernels[k].k.ID == id {
			return j
		}
	}
	return -1
}
