// Package console is fgtop's node console: a Bubble Tea v2 program that
// renders the engine's immutable model.Snapshot values and never touches
// files or NVML. It owns the root model (App), the main screen's panes
// (devices, kernels, agents, issues, the history graphs), the details,
// the help screen, the prompt and its commands, the header and footer,
// the layout, the stack of layers, and the plumbing that opens the
// partition editor (package editor) on the desk.
//
// Wiring (cmd): console.New(engine.Subscribe(ctx), console.Options{...})
// returns the root model, *App; run it with tea.NewProgram and call its
// Close once the program has ended. Each program (each SSH session) builds
// its own kit.Styles from its own theme, so nothing here is a package-level
// style or state.
//
// How a frame is made:
//
//   - Snapshots arrive on the channel; the listener drains it to the newest
//     one, and Update only queues it. A frame tick (FrameRate per second at most)
//     adopts the newest queued snapshot: render.Derive computes everything
//     the views need from it once, history records one sample per second
//     of snapshot time, the kernel table is re-filtered and re-sorted.
//   - View composes the screen from that derived data with pure
//     presentation functions (deviceColumns, kernelColumns, placePanes,
//     ...) and caches the frame until the state changes, because Bubble Tea
//     asks for a view after every message.
//   - The main screen's panes (pane_devices.go, pane_kernels.go,
//     pane_agents.go, pane_issues.go) share the console's *common (the
//     kit's Common and the derived data): each embeds the one scrolling
//     skeleton (list.go) and draws its rows with the pure renderers of
//     present.go. The root (pane.go) only sizes them from the layout, keeps
//     the focus, and routes keys to the focused pane and mouse events to
//     the pane under the pointer, in that pane's coordinates.
//
// Everything over the main screen is a kit.Layer (stack.go): the partition
// editor, a dialog, the help, a detail and the prompt. The root keeps them
// on one stack, ordered prompt > dialog > screens (the newest screen on
// top), and only routes: the top layer has the keys and the wheel; the
// topmost screen is drawn between the root's header and footer, dialogs
// over it.
//
// The key map is built for a Role (NewKeyMap, with the editor's bindings
// for an operator): a viewer's map has no action that changes the node, so
// read-only mode neither handles nor lists them. With no desk (no
// agent.toml) `e` says why there is nothing to edit. The program holds the
// draft while editing: call Close after the program ends to give it back.
package console
