// Package ui holds fgtop's terminal screens, split by what a person sees
// (as k9s separates widgets, views and row renderers). It has no code of
// its own; its packages are:
//
//   - kit: the drawing kit, which knows no screen: styles and themes'
//     paints, text measured in cells (and the --ascii stand-ins), spans,
//     bars, graphs, telemetry formatting, the key map and the help drawn
//     from it, the state every component shares (Common), the layer
//     protocol the root stacks screens and dialogs with, and the dialog.
//   - render: the rows a screen shows, derived once per snapshot from the
//     engine's model (devices, kernels, agents, issues, their column
//     widths, the kernel filter), memoised per immutable value.
//   - editor: the partition editor, a screen the console opens (`e`).
//   - console: the node console, the root Bubble Tea model: panes, details,
//     help, prompt, header and footer, history graphs; it opens the editor.
//   - fleet: the fleet table, which opens a read-only console per node.
//   - ssh: the SSH server that runs one console program per session.
//   - local: runs a console program on this process's terminal (the node
//     console on an engine it starts, or the fleet's), with the options
//     every console of the process shares.
//   - screen: draws a program when what it shows changed, not at a frame
//     rate (every console program, local or served, runs on it); it knows
//     no screen.
//
// Imports point one way: fleet -> console -> editor -> render -> kit ->
// engine, model. No screen imports another except that the console opens
// the editor and the fleet opens consoles.
package ui
