package demo

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fgtop/fgtop/engine"
)

// Marker is the file the demo node leaves at the top of its directory.
// fgtop demo prints its agent.toml and mock files for other commands,
// and the console, watch, serve and the exporter pointed at them record
// on the side into the host's history by default: the demo's made-up
// kernels would then be read by history, snapshot --at, plan --replay
// and the fleet as having run on this node. The marker tells them the
// files are the demo's (DirOf).
const Marker = ".fgtop-demo"

const markerText = `This directory is an fgtop demo node's; fgtop demo removes it when it stops.
Commands pointed at its files record them only into a history directory
named with --history DIR, never into the host's own (FGTOP_HISTORY or the
default directory).
`

// writeMarker leaves Marker in the node's directory.
func writeMarker(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, Marker), []byte(markerText), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// DirOf returns the directory of the demo node that holds one of paths
// (an agent.toml, a scratch root): the nearest one up from the path with
// Marker in it, owned by the path's owner; "" when there is none. A path
// that cannot be read is passed over.
func DirOf(paths ...string) string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		own, err := os.Stat(abs)
		if err != nil {
			continue
		}
		for d := abs; ; d = filepath.Dir(d) {
			if fi, err := os.Lstat(filepath.Join(d, Marker)); err == nil && fi.Mode().IsRegular() && sameOwner(fi, own) {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return ""
}

// FilesOf is DirOf for the node o describes: its scratch roots and its
// agent.toml (a copy of the demo's names the demo's scratch roots).
func FilesOf(o engine.Options) string {
	paths := []string{o.ConfigPath}
	for _, r := range o.Roots {
		paths = append(paths, r.Path)
	}
	return DirOf(paths...)
}
