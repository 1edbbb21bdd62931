// Package ui is fgtop's console: a Bubble Tea v2 program that renders the
// engine's immutable model.Snapshot values and never touches files or
// NVML.
//
// Wiring (cmd): ui.New(engine.Subscribe(ctx), ui.Options{...}) returns the
// root model, *App; run it with tea.NewProgram and call its Close once the
// program has ended. Each program (each SSH
// session) builds its own Styles from its own theme, so nothing here is a
// package-level style or state.
//
// How a frame is made:
//
//   - Snapshots arrive on the channel; the listener drains it to the newest
//     one, and Update only queues it. A frame tick (60 per second at most)
//     adopts the newest queued snapshot: derive computes everything the
//     views need from it once (derive.go, memoised per immutable kernel and
//     device usage in cache.go), history records one sample per second of
//     snapshot time, the kernel table is re-filtered and re-sorted.
//   - View composes the screen from that derived data with pure
//     presentation functions (barLayout, deviceColumns, kernelColumns,
//     placePanes, formatTelemetry, ...) and caches the frame until the
//     state changes, because Bubble Tea asks for a view after every message.
//   - The main screen's panes (pane_devices.go, pane_kernels.go,
//     pane_agents.go, pane_issues.go) are components sharing the console's
//     *common: each embeds the one scrolling skeleton (list.go: cursor,
//     offset, title row, row loop, clicks) and draws its rows with the pure
//     renderers of present.go. The root (pane.go) only sizes them from the
//     layout, keeps the focus, and routes keys to the focused pane (a
//     pane's own keys, such as s for the kernels, from any pane) and mouse
//     events to the pane under the pointer, in that pane's coordinates.
//   - Rows are assembled from plain text and precomputed SGR paints
//     (styles.go), measured as they are built; every row is exactly the
//     terminal's width and never cut mid-glyph.
//
// Components (issue 13): everything over the main screen is a layer
// (layers.go): the partition editor, a dialog, the help, a detail and the
// prompt are each a type with Update, View and SetSize, embedding the
// console's *common (styles, key map, clock, snapshot, flash and the bus on
// which they ask the root to open a layer, quit, or run the desk's work as
// a command). The root keeps them on one stack, ordered prompt > dialog >
// screens (the newest screen on top), and only routes: the top layer has
// the keys and the wheel; the topmost screen is drawn between the root's
// header and footer, dialogs over it. A new overlay is a type in its own
// file and a push where it opens.
//
// The key map is built for a Role (keys.go): a viewer's map has no action
// that changes the node, so read-only mode neither handles nor lists them.
// Bindings carry a scope (main screen, editor grid, plan, journal, dialog),
// so the help and the footer list only the keys that work where the user
// is.
//
// The partition editor (editor*.go, dialog.go; `e`, operators only) edits a
// partition.Request through the Options.Desk's session: every edit re-plans,
// the grid shows the plan's Next partition (so auto-split is previewed), p
// shows the plan, A applies through a dialog whose default is Cancel and
// which asks for the affected agent's id when live kernels would be
// stranded. Update does no file I/O: the desk's open, apply, review,
// journal, close and the once-a-second poll of who holds the draft run as
// tea.Cmds and come back as messages (editor_cmds.go); while an apply
// runs the editor says so and refuses a second one and any edit. A write
// through the desk, or a config hash in the snapshot other than the
// draft's (the engine follows agent.toml: Snapshot.ConfigHash), makes the
// draft stale until p reviews it (partition.Session.Stale, no read); a
// take-over ends it. Every console sharing the desk shows who holds the
// draft. With no desk (no agent.toml) `e` says why there is nothing to
// edit. The program holds the draft while editing: call Close after the
// program ends to give it back.
package ui
