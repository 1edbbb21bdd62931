package ui

import (
	"hash/fnv"

	"github.com/fgtop/fgtop/model"
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
type taken struct{ looks, colours, shapes uint32 }

func (t *taken) add(l uint8, dims lookDims) {
	t.looks |= 1 << l
	t.colours |= 1 << (int(l) % dims.colours)
	t.shapes |= 1 << (int(l) % dims.shapes)
}

// deriveLooks gives every kernel a look (colour and shape on the device
// bars, and its mark in the kernel list). A kernel keeps the look it was
// first given while it lives; a new kernel takes its preferred look
// (lookOf) unless a kernel it shares a device with already has it, then
// the next look that differs from theirs in colour and in shape (where
// shapes vary), else in either, so kernels side by side on a bar differ
// while there are looks enough.
func (d *derived) deriveLooks(c *deriveCache, dims lookDims) {
	dims.colours, dims.shapes = max(dims.colours, 1), max(dims.shapes, 1)
	n := dims.n()
	if c.lookN != n {
		clear(c.looks)
		c.lookN = n
	}
	if len(c.looks) > 2*len(d.kernels)+64 {
		for id := range c.looks {
			if _, ok := d.kernelIndex(id); !ok {
				delete(c.looks, id)
			}
		}
	}
	var fresh map[model.KernelID][]int // new kernels: the device rows they hold
	for i := range d.kernels {
		id := d.kernels[i].k.ID
		if _, ok := c.looks[id]; !ok {
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
		devTaken := make([]taken, len(d.devs))
		for di := range d.devs {
			for _, id := range d.devs[di].kernOf {
				if devs, ok := fresh[id]; ok {
					fresh[id] = append(devs, di)
				} else if l, ok := c.looks[id]; ok {
					devTaken[di].add(l, dims)
				}
			}
		}
		// Snapshot order (by id), so a seed's replay gives the same looks.
		for i := range d.kernels {
			id := d.kernels[i].k.ID
			devs, ok := fresh[id]
			if !ok || len(devs) == 0 {
				// Not placed yet (pending): chosen once it holds a
				// device, next to the kernels it then shares it with.
				continue
			}
			var used taken
			for _, di := range devs {
				t := devTaken[di]
				used.looks |= t.looks
				used.colours |= t.colours
				used.shapes |= t.shapes
			}
			pref := lookOf(id, n)
			look, best := pref, -1
			for step := range n {
				l := (int(pref) + step) % n
				if used.looks&(1<<l) != 0 {
					continue
				}
				score := 0
				if used.colours&(1<<(l%dims.colours)) == 0 {
					score++
				}
				if dims.shapes > 1 && used.shapes&(1<<(l%dims.shapes)) == 0 {
					score++
				}
				if score > best {
					look, best = uint8(l), score
				}
				if score == 2 || (score == 1 && dims.shapes == 1) {
					break
				}
			}
			c.looks[id] = look
			for _, di := range devs {
				devTaken[di].add(look, dims)
			}
		}
	}
	for i := range d.kernels {
		id := d.kernels[i].k.ID
		l, ok := c.looks[id]
		if !ok {
			l = lookOf(id, n)
		}
		d.kernels[i].look = l
	}
	for di := range d.devs {
		r := &d.devs[di]
		if len(r.kernOf) == 0 {
			continue
		}
		r.kernLook = make([]uint8, len(r.kernOf))
		for j, id := range r.kernOf {
			l, ok := c.looks[id]
			if !ok {
				// A holder the snapshot lists no kernel for: still its
				// own colour, by id.
				l = lookOf(id, n)
			}
			r.kernLook[j] = l
		}
	}
}
