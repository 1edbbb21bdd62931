// Package ui holds the Bubble Tea v2 console: the root app model, panes,
// dialogs, the key map and styles built from a theme. It renders
// model.Snapshot values and sends intents to the engine; it never touches
// files or NVML.
package ui
