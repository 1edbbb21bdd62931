// Package editor is fgtop's partition editor (the console's `e`,
// operators only), a kit.Layer the console stacks over its main screen.
//
// It edits a partition.Request through the desk's session: every edit
// re-plans, the grid shows the plan's Next partition (so auto-split is
// previewed), p shows the plan, A applies through a dialog whose default
// is Cancel and which asks for the affected agent's id when live kernels
// would be stranded. Update does no file I/O: the desk's open, apply,
// review, journal, close and the poll of who holds the draft run as
// tea.Cmds and come back as the Desk*Msg messages (editor_cmds.go); while
// an apply runs the editor says so and refuses a second one and any edit.
// A write through the desk, or a config hash in the snapshot other than
// the draft's, makes the draft stale until p reviews it; a take-over ends
// it. The editor lists the devices the console derived (render.Derived),
// read through a func the console gives it.
package editor
