package model

import (
	"strconv"
	"strings"
)

// DeviceLabels names a node's accelerators as the console's devices pane
// does: a GPU by its index as nvidia-smi does ("GPU3"), another plugin's
// device by plugin and index ("rocm1"), a MIG instance by its GPU
// instance and compute instance ("MIG 4/0"); where indices collide, by
// plugin and position ("cuda#2"). CPU cores and memory get none.
func DeviceLabels(devs []Device) map[DeviceID]string {
	out := map[DeviceID]string{}
	var plain []int
	seen := map[string]bool{}
	clash := false
	for i := range devs {
		d := &devs[i]
		switch {
		case !d.IsAccelerator():
		case d.IsMIG():
			suffix := string(d.ID)
			if _, rest, ok := strings.Cut(suffix, "/"); ok {
				suffix = rest
			}
			out[d.ID] = "MIG " + suffix
		default:
			l := string(d.Name) + strconv.Itoa(d.Index)
			if d.Name == "cuda" {
				l = "GPU" + strconv.Itoa(d.Index)
			}
			clash = clash || seen[l]
			seen[l] = true
			out[d.ID] = l
			plain = append(plain, i)
		}
	}
	if clash {
		for n, i := range plain {
			out[devs[i].ID] = string(devs[i].Name) + "#" + strconv.Itoa(n)
		}
	}
	return out
}
