package model

// DiffKernels calls f for every kernel that differs between two versions
// of a sequence: (old, nil) for one that went, (nil, new) for one that
// came, (old, new) for one whose *Kernel changed. Chunks the versions
// share are skipped without reading them, so the diff of two consecutive
// snapshots costs O(changed chunks + n/128), not O(n): a recorder that
// follows every change stays cheap at 10,000 kernels.
func DiffKernels(old, new *KernelSeq, f func(old, new *Kernel)) {
	var a, b []*pchunk[*Kernel]
	if old != nil {
		a = old.p().chunks
	}
	if new != nil {
		b = new.p().chunks
	}
	ci, i, cj, j := 0, 0, 0, 0
	for {
		for ci < len(a) && i == len(a[ci].xs) {
			ci, i = ci+1, 0
		}
		for cj < len(b) && j == len(b[cj].xs) {
			cj, j = cj+1, 0
		}
		if ci >= len(a) && cj >= len(b) {
			return
		}
		if i == 0 && j == 0 && ci < len(a) && cj < len(b) && a[ci] == b[cj] {
			ci++
			cj++
			continue
		}
		switch {
		case ci >= len(a):
			f(nil, b[cj].xs[j])
			j++
		case cj >= len(b):
			f(a[ci].xs[i], nil)
			i++
		default:
			x, y := a[ci].xs[i], b[cj].xs[j]
			switch {
			case x == y:
				// The same kernel: most of a changed chunk, and cheaper to
				// tell than by comparing ids.
				i++
				j++
			case x.ID < y.ID:
				f(x, nil)
				i++
			case x.ID > y.ID:
				f(nil, y)
				j++
			default:
				if x != y {
					f(x, y)
				}
				i++
				j++
			}
		}
	}
}
