package ui

import (
	tea "charm.land/bubbletea/v2"
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
