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
func (a *App) sortColumns() []string {
	cols := []string{"id", "agent"}
	if a.kview.dev >= 0 {
		cols = append(cols, "on")
	}
	if a.d != nil {
		for _, s := range a.d.slotCols {
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
func (a *App) followedDevice() int {
	if !a.follow || a.d == nil {
		return -1
	}
	if c := a.cursor[paneDevices]; c >= 0 && c < len(a.d.devs) {
		return c
	}
	return -1 // the cpu/mem line: every kernel
}

// refreshKernels recomputes the kernels table rows.
func (a *App) refreshKernels() {
	a.invalidate()
	kv := kernelView{dev: a.followedDevice()}
	if a.d == nil {
		a.kview = kv
		return
	}
	d := a.d
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
	filter := compileFilter(a.filter)
	rows := base[:0:0]
	for _, ki := range base {
		if filter.match(&d.kernels[ki]) {
			rows = append(rows, ki)
		}
	}
	if !slices.Contains(a.sortColumns(), a.sortCol) {
		a.sortCol = "id"
	}
	cmpf := a.kernelCmp(on, onF)
	slices.SortStableFunc(rows, func(x, y int) int {
		c := cmpf(x, y)
		if c == 0 {
			c = x - y
		} else if a.sortDesc {
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
	a.kview = kv
	if a.cursor[paneKernels] >= len(rows) {
		a.cursor[paneKernels] = max(len(rows)-1, 0)
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
func (a *App) kernelCmp(on map[int]int, onF []float64) func(x, y int) int {
	ks := a.d.kernels
	switch a.sortCol {
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
	for c, s := range a.d.slotCols {
		if slotKey(s) == a.sortCol {
			return func(x, y int) int { return cmp.Compare(ks[x].slotF[c], ks[y].slotF[c]) }
		}
	}
	return func(x, y int) int { return 0 }
}

// setSort sorts by col; the same column again flips the direction.
func (a *App) setSort(col string, desc bool) bool {
	col = strings.ToLower(col)
	if !slices.Contains(a.sortColumns(), col) {
		return false
	}
	a.sortCol, a.sortDesc = col, desc
	a.refreshKernels()
	return true
}

// cycleSort moves to the next sortable column.
func (a *App) cycleSort() {
	cols := a.sortColumns()
	i := slices.Index(cols, a.sortCol)
	a.sortCol = cols[(i+1)%len(cols)]
	a.sortDesc = false
	a.refreshKernels()
}
