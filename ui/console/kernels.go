package console

import (
	"cmp"
	"slices"
	"strings"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/render"
)

// kernelView is the kernels table's rows after following, filtering and
// sorting: recomputed when one of those or the snapshot changes, never per
// frame.
type kernelView struct {
	Rows   []int    // indices into derived.kernels
	OnDev  []string // what each row holds on the followed device
	OnDevF []float64
	Dev    int // followed device row, -1 for all kernels
	// FilterErr is why the filter matches nothing whatever the kernels
	// hold: a /dev: name that names no device or several.
	FilterErr string
	// FilterShort is FilterErr's short form for the footer ("": none).
	FilterShort string
}

// sortColumns are the kernel table's sortable columns, in display order.
func (p *kernelsPane) sortColumns() []string {
	cols := []string{"id", "agent"}
	if p.Showing.Dev >= 0 {
		cols = append(cols, "on")
	}
	if p.d != nil {
		for _, s := range p.d.SlotCols {
			cols = append(cols, slotKey(s))
		}
	}
	// The owner and use columns come last, so s cycles through the older
	// ones in the order it always did.
	return append(cols, "devices", "age", "state", "user", "type", "session", "util", "gmem")
}

// slotKey is a slot column's name in :sort and the s key's cycle.
func slotKey(s model.SlotName) string { return strings.ToLower(render.SlotHeader(s)) }

// followedDevice is the device row the kernels table follows, or -1.
func (p *kernelsPane) followedDevice() int {
	// A search looks at every kernel: a match on another GPU is what the
	// operator is looking for, not "no kernel matches".
	if !p.follow || p.d == nil || p.Filter != "" {
		return -1
	}
	if c := p.device(); c >= 0 && c < len(p.d.Devs) {
		return c
	}
	return -1 // the cpu/mem line: every kernel
}

// refresh recomputes the kernels table rows.
func (p *kernelsPane) refresh() {
	p.Invalidate()
	kv := kernelView{Dev: p.followedDevice()}
	if p.d == nil {
		p.Showing = kv
		return
	}
	d := p.d
	var base []int
	on := map[int]int{} // kernel index -> position in the device's lists
	var onStr []string
	var onF []float64
	if kv.Dev >= 0 {
		// A GPU in MIG mode stands for its instances.
		for _, di := range append([]int{kv.Dev}, d.Devs[kv.Dev].Children...) {
			r := &d.Devs[di]
			for p, ki := range r.Kernels {
				if q, ok := on[ki]; ok {
					// Printed as the exact sum of what it holds on each
					// instance; the float only orders the rows.
					onF[q] += r.OnDevF[p]
					onStr[q] = addDecStrings(onStr[q], r.OnDev[p])
					continue
				}
				on[ki] = len(onStr)
				onStr = append(onStr, r.OnDev[p])
				onF = append(onF, r.OnDevF[p])
				base = append(base, ki)
			}
		}
		slices.Sort(base)
	} else {
		base = make([]int, len(d.Kernels))
		for i := range base {
			base[i] = i
		}
	}
	filter := render.CompileFilter(p.Filter)
	err := filter.BindDevices(func(name string) (func(*render.KernRow) bool, error) {
		di, err := resolveDevice(d, name)
		if err != nil {
			return nil, err
		}
		// A GPU in MIG mode stands for its instances, as when followed.
		held := map[*render.KernRow]bool{}
		for _, r := range append([]int{di}, d.Devs[di].Children...) {
			for _, ki := range d.Devs[r].Kernels {
				held[&d.Kernels[ki]] = true
			}
		}
		return func(r *render.KernRow) bool { return held[r] }, nil
	})
	rows := base[:0:0]
	if err != nil {
		kv.FilterErr, kv.FilterShort = err.Error(), shortOf(err)
	} else {
		for _, ki := range base {
			if filter.Match(&d.Kernels[ki]) {
				rows = append(rows, ki)
			}
		}
	}
	// "id" is always a column: the usual sort needs no list of them
	// (built for each snapshot by each of serve's sessions otherwise).
	if p.sortCol != "id" && !slices.Contains(p.sortColumns(), p.sortCol) {
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
	kv.Rows = rows
	if kv.Dev >= 0 {
		kv.OnDev = make([]string, len(rows))
		kv.OnDevF = make([]float64, len(rows))
		for i, ki := range rows {
			kv.OnDev[i], kv.OnDevF[i] = onStr[on[ki]], onF[on[ki]]
		}
	}
	p.Showing = kv
	p.matchDevs = nil
	if p.Filter != "" {
		// The devices holding a match are marked in the devices pane.
		// One pass over the matches and one over the holdings, so a
		// search on a node of 10,000 kernels stays linear.
		hit := make([]bool, len(d.Kernels))
		for _, ki := range rows {
			hit[ki] = true
		}
		p.matchDevs = make([]bool, len(d.Devs))
		for i := range d.Devs {
			p.matchDevs[i] = slices.ContainsFunc(d.Devs[i].Kernels, func(ki int) bool { return hit[ki] })
		}
		for i := range d.Devs {
			for _, c := range d.Devs[i].Children {
				p.matchDevs[i] = p.matchDevs[i] || p.matchDevs[c]
			}
		}
	}
	if p.Cursor >= len(rows) {
		p.Cursor = max(len(rows)-1, 0)
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
	ks := p.d.Kernels
	switch p.sortCol {
	case "agent":
		return func(x, y int) int { return cmp.Compare(ks[x].K.Agent, ks[y].K.Agent) }
	case "on":
		// A search over every GPU has no "on this GPU" amounts: nothing
		// to order by there.
		at := func(i int) float64 {
			if j, ok := on[i]; ok && j < len(onF) {
				return onF[j]
			}
			return 0
		}
		return func(x, y int) int { return cmp.Compare(at(x), at(y)) }
	case "devices":
		return func(x, y int) int {
			if c := cmp.Compare(ks[x].NDevs, ks[y].NDevs); c != 0 {
				return c
			}
			return cmp.Compare(ks[x].Devs, ks[y].Devs)
		}
	case "age":
		// Youngest first: the most recently seen.
		return func(x, y int) int { return ks[y].K.Seen.Compare(ks[x].K.Seen) }
	case "state":
		return func(x, y int) int { return cmp.Compare(stateRank(ks[x].K.State), stateRank(ks[y].K.State)) }
	case "user":
		return func(x, y int) int { return cmp.Compare(ks[x].W.FUser, ks[y].W.FUser) }
	case "type":
		return func(x, y int) int { return cmp.Compare(ks[x].W.FType, ks[y].W.FType) }
	case "session":
		return func(x, y int) int { return cmp.Compare(ks[x].W.FSession, ks[y].W.FSession) }
	case "util":
		// Idle first when ascending: what an operator hunts for.
		return func(x, y int) int {
			if ix, iy := ks[x].W.Idle, ks[y].W.Idle; ix != iy {
				if ix {
					return -1
				}
				return 1
			}
			return cmp.Compare(ks[x].W.UtilF, ks[y].W.UtilF)
		}
	case "gmem":
		return func(x, y int) int { return cmp.Compare(ks[x].W.GmemF, ks[y].W.GmemF) }
	case "id", "":
		return func(x, y int) int { return 0 }
	}
	for c, s := range p.d.SlotCols {
		if slotKey(s) == p.sortCol {
			return func(x, y int) int { return cmp.Compare(ks[x].SlotF[c], ks[y].SlotF[c]) }
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
	p.Filter = f
	p.refresh()
}

// indexOf is the table's row of a kernel, or -1.
func (p *kernelsPane) indexOf(id model.KernelID) int {
	for j, k := range p.Showing.Rows {
		if p.d.Kernels[k].K.ID == id {
			return j
		}
	}
	return -1
}

// addDecStrings is the exact decimal sum of two amounts as the kernel
// list prints them; where either is not a decimal (never, from a
// derivation), the two side by side, not a guess.
func addDecStrings(a, b string) string {
	x, errA := model.ParseDec(a)
	y, errB := model.ParseDec(b)
	if errA != nil || errB != nil {
		return a + "+" + b
	}
	return x.Add(y).String()
}
