package console

import (
	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/ui/kit"
)

// selectedID is the id of the focused pane's selected row, the text an
// operator pastes into a ticket or a shell (each pane's Selected). It is
// "" when the row names nothing.
func (a *App) selectedID() string { return a.panes[a.focus].Selected() }

// copySelected puts the selected id on the clipboard with OSC 52 (the
// terminal does the copying, so it works over SSH too) and says so. It
// changes nothing on the node, so viewers have it as well.
func (a *App) copySelected() tea.Cmd {
	// The id came through the one rule for outside text already; the
	// guard keeps a clipboard (pasted into a shell) free of control
	// characters whatever a pane returns.
	id := untrusted.Text(a.selectedID())
	if id == "" {
		a.Flashf(kit.LvlInfo, "nothing to copy: this row names no id")
		return nil
	}
	// Backend.AI names kernels by UUID; another id is a peer's invention
	// (a bad-id issue) and is not put where it would be pasted.
	if _, ok := a.panes[a.focus].(*kernelsPane); ok && !untrusted.IsUUID(id) {
		a.Flashf(kit.LvlWarn, "not copied: kernel id "+id+" is not a UUID")
		return nil
	}
	a.Flashf(kit.LvlInfo, "copied "+id)
	return tea.SetClipboard(id)
}

// jumpToIssue takes Enter on an issue to what it is about: the kernel it
// names, selected in the kernel list, else its device, selected in the
// devices pane, and opens that row's detail (which lists the issue). It
// reports false, having flashed why, when the issue names neither or they
// are not on screen; the issue's own detail opens then.
func (a *App) jumpToIssue(is *model.Issue) bool {
	if is.Kernel != "" {
		j := a.Kernels.indexOf(is.Kernel)
		if j < 0 && a.Kernels.follow {
			// Following another device hides it: show every kernel.
			a.Kernels.follow = false
			a.Kernels.refresh()
			j = a.Kernels.indexOf(is.Kernel)
		}
		if j >= 0 {
			a.setFocusPane(paneKernels)
			a.sizePanes()
			a.Kernels.selectRow(j)
			a.openDetail()
			return true
		}
	}
	if is.Device.ID != "" {
		for i := range a.d.Devs {
			if a.d.Devs[i].Key == is.Device {
				a.setFocusPane(paneDevices)
				a.sizePanes()
				a.devices.selectRow(i)
				a.openDetail()
				return true
			}
		}
	}
	switch {
	case is.Kernel != "":
		a.Flashf(kit.LvlInfo, "kernel "+string(is.Kernel)+" is not in the kernel list (gone, or hidden by the filter)")
	case is.Device.ID != "":
		a.Flashf(kit.LvlInfo, "device "+is.Device.String()+" is not in the devices pane")
	default:
		a.Flashf(kit.LvlInfo, "this issue names no device or kernel to go to")
	}
	return false
}
