package render

import (
	"hash/fnv"

	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
)

// lookOf is a kernel's preferred look among n: a function of its id only,
// so the same kernel has the same colour in every session and after a
// restart.
func lookOf(id model.KernelID, n int) uint8 {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return uint8(h.Sum32() % uint32(n))
}

// taken is the looks, colours and shapes the kernels on a device have.
type taken struct{ Looks, Colours, Shapes uint32 }

func (t *taken) add(l uint8, dims kit.LookDims) {
	t.Looks |= 1 << l
	t.Colours |= 1 << (int(l) % dims.Colours)
	t.Shapes |= 1 << (int(l) % dims.Shapes)
}

// deriveLooks gives every kernel a look (colour and shape on the device
// bars, and its mark in the kernel list). A kernel keeps the look it was
// first given while it lives; a new kernel takes its preferred look
// (lookOf) unless a kernel it shares a device with already has it, then
// the next look that differs from theirs in colour and in shape (where
// shapes vary), else in either, so kernels side by side on a bar differ
// while there are looks enough.
func (d *Derived) deriveLooks(c *DeriveCache, dims kit.LookDims) {
	dims.Colours, dims.Shapes = max(dims.Colours, 1), max(dims.Shapes, 1)
	n := dims.N()
	if c.lookN != n {
		clear(c.Looks)
		c.lookN = n
	}
	if len(c.Looks) > 2*len(d.Kernels)+64 {
		for id := range c.Looks {
			if _, ok := d.KernelIndex(id); !ok {
				delete(c.Looks, id)
			}
		}
	}
	var fresh map[model.KernelID][]int // new kernels: the device rows they hold
	for i := range d.Kernels {
		id := d.Kernels[i].K.ID
		if _, ok := c.Looks[id]; !ok {
			if fresh == nil {
				fresh = map[model.KernelID][]int{}
			}
			fresh[id] = nil
		}
	}
	if fresh != nil {
		// What each device's kernels already look like, kept up to date as
		// new kernels are given looks: one pass over the holdings, however
		// many kernels are new.
		devTaken := make([]taken, len(d.Devs))
		for di := range d.Devs {
			for _, id := range d.Devs[di].kernOf {
				if devs, ok := fresh[id]; ok {
					fresh[id] = append(devs, di)
				} else if l, ok := c.Looks[id]; ok {
					devTaken[di].add(l, dims)
				}
			}
		}
		// Snapshot order (by id), so a seed's replay gives the same looks.
		for i := range d.Kernels {
			id := d.Kernels[i].K.ID
			devs, ok := fresh[id]
			if !ok || len(devs) == 0 {
				// Not placed yet (pending): chosen once it holds a
				// device, next to the kernels it then shares it with.
				continue
			}
			var used taken
			for _, di := range devs {
				t := devTaken[di]
				used.Looks |= t.Looks
				used.Colours |= t.Colours
				used.Shapes |= t.Shapes
			}
			pref := lookOf(id, n)
			look, best := pref, -1
			for step := range n {
				l := (int(pref) + step) % n
				if used.Looks&(1<<l) != 0 {
					continue
				}
				score := 0
				if used.Colours&(1<<(l%dims.Colours)) == 0 {
					score++
				}
				if dims.Shapes > 1 && used.Shapes&(1<<(l%dims.Shapes)) == 0 {
					score++
				}
				if score > best {
					look, best = uint8(l), score
				}
				if score == 2 || (score == 1 && dims.Shapes == 1) {
					break
				}
			}
			c.Looks[id] = look
			for _, di := range devs {
				devTaken[di].add(look, dims)
			}
		}
	}
	for i := range d.Kernels {
		id := d.Kernels[i].K.ID
		l, ok := c.Looks[id]
		if !ok {
			l = lookOf(id, n)
		}
		d.Kernels[i].Look = l
	}
	for di := range d.Devs {
		r := &d.Devs[di]
		if len(r.kernOf) == 0 {
			continue
		}
		r.KernLook = make([]uint8, len(r.kernOf))
		for j, id := range r.kernOf {
			l, ok := c.Looks[id]
			if !ok {
				// A holder the snapshot lists no kernel for: still its
				// own colour, by id.
				l = lookOf(id, n)
			}
			r.KernLook[j] = l
		}
	}
}
