// Package kit is the drawing kit fgtop's screens share; it knows no
// screen. It owns:
//
//   - styles.go: a program's Styles, built from its theme (never a package
//     global: an SSH server runs many programs), glyphs and the --ascii
//     stand-ins;
//   - text.go, spans.go, rows.go: text measured in terminal cells, Lines
//     built from precomputed SGR paints, spans of a level and text, title
//     and empty rows; rows are never cut mid-glyph;
//   - bar.go, graph.go: the allocation bar and the history graphs;
//   - format.go: telemetry and amounts in a few cells, and thresholds;
//   - keys.go, help.go, scroll.go: the key map (bindings of actions in
//     scopes, for a Role), the actions every screen shares and a dialog's
//     keys, the help and footer drawn from the same bindings, cursor and
//     wheel movement; each screen defines its own actions and scopes and
//     builds its map;
//   - common.go, flash.go, layers.go, dialog.go: Common, the state every
//     component of one program shares by pointer; the flash line; the
//     Layer protocol a root stacks screens, dialogs and prompts with (and
//     the Bus on which components ask the root for what only it can do);
//     the Dialog, whose default is Cancel.
//
// Everything here is pure data to strings, tested without a terminal.
package kit
