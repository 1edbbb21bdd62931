// Package themes embeds fgtop's colour themes and loads them by name or from
// a file.
//
// A theme is a flat set of style specs (see [ParseSpec]), one per semantic
// role of the console: text, dim, warn, crit, the share-bar segment palette
// and so on, in the spirit of gh-dash's flat theme struct. It carries data
// only; the ui package builds one Styles value from it per program, so an SSH
// server running many programs never shares styles between sessions.
//
// Built-in themes: dark, light, high-contrast, mono and colorblind (the
// Okabe-Ito palette, safe for the common colour-vision deficiencies). User
// themes are TOML files, loaded by path or by name from
// $XDG_CONFIG_HOME/fgtop/themes/NAME.toml; they may set only some keys and
// inherit the rest from a built-in theme.
package themes
