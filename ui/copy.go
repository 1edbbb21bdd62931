package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
)

// selectedID is the id of the focused pane's selected row, the text an
// operator pastes into a ticket or a shell: a device's id, a kernel's id,
// an agent's id, or what an issue is about (its kernel, else its file,
// else its device, else its agent). It is "" when the row names nothing.
func (a *App) selectedID() string {
	if a.d == nil {
		return ""
	}
	c := a.cursor[a.focus]
	switch a.focus {
	case paneDevices:
		if c < len(a.d.devs) {
			return string(a.d.devs[c].key.ID)
		}
	case paneKernels:
		if c < len(a.kview.rows) {
			return string(a.d.kernels[a.kview.rows[c]].k.ID)
		}
	case paneAgents:
		if c < len(a.d.agents) {
			return string(a.d.agents[c].a.ID)
		}
	case paneIssues:
		if c < len(a.d.issues) {
			is := a.d.issues[c].is
			switch {
			case is.Kernel != "":
				return string(is.Kernel)
			case is.File != "":
				return is.File
			case is.Device.ID != "":
				return string(is.Device.ID)
			case is.Agent != "":
				return string(is.Agent)
			}
		}
	}
	return ""
}

// copySelected puts the selected id on the clipboard with OSC 52 (the
// terminal does the copying, so it works over SSH too) and says so. It
// changes nothing on the node, so viewers have it as well.
func (a *App) copySelected() tea.Cmd {
	id := a.selectedID()
	if id == "" {
		a.flashf(lvlInfo, "nothing to copy: this row names no id")
		return nil
	}
	a.flashf(lvlInfo, "copied "+id)
	return tea.SetClipboard(id)
}

// jumpToIssue takes Enter on an issue to what it is about: the kernel it
// names, selected in the kernel list, else its device, selected in the
// devices pane, and opens that row's detail (which lists the issue). It
// reports false, having flashed why, when the issue names neither or they
// are not on screen; the issue's own detail opens then.
func (a *App) jumpToIssue(is *model.Issue) bool {
	if is.Kernel != "" {
		j := a.kernelIndex(is.Kernel)
		if j < 0 && a.follow {
			// Following another device hides it: show every kernel.
			a.follow = false
			a.refreshKernels()
			j = a.kernelIndex(is.Kernel)
		}
		if j >= 0 {
			a.focus = paneKernels
			a.selectRow(paneKernels, j)
			a.openDetail()
			return true
		}
	}
	if is.Device.ID != "" {
		for i := range a.d.devs {
			if a.d.devs[i].key == is.Device {
				a.focus = paneDevices
				a.selectRow(paneDevices, i)
				a.openDetail()
				return true
			}
		}
	}
	switch {
	case is.Kernel != "":
		a.flashf(lvlInfo, "kernel "+string(is.Kernel)+" is not in the kernel list (gone, or hidden by the filter)")
	case is.Device.ID != "":
		a.flashf(lvlInfo, "device "+is.Device.String()+" is not in the devices pane")
	default:
		a.flashf(lvlInfo, "this issue names no device or kernel to go to")
	}
	return false
}

// kernelIndex is the kernel list's row of a kernel, or -1.
func (a *App) kernelIndex(id model.KernelID) int {
	for j, k := range a.kview.rows {
		if a.d.kernels[k].k.ID == id {
			return j
		}
	}
	return -1
}
