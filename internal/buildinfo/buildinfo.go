// Package buildinfo says which source a binary came from and how it was
// built: what `fgtop version`, the manual page and the exporter's build
// metric report.
package buildinfo

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/fgtop/fgtop/engine/inventory"
)

// Info is enough to tell which source a binary came from and whether it
// can talk to NVML.
type Info struct {
	// Version is the module version (v1.2.3 from `go install ...@v1.2.3`,
	// a pseudo-version from a VCS checkout) or "(devel)".
	Version string `json:"version"`
	// Module is the main module's path.
	Module string `json:"module"`
	// Revision, Time and Modified come from the VCS stamp; nil where the
	// build has none (-buildvcs=false, a source tarball).
	Revision *string `json:"vcs_revision"`
	Time     *string `json:"vcs_time"`
	Modified *bool   `json:"vcs_modified"`
	// Go is the toolchain that built the binary.
	Go   string `json:"go"`
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// CGO is whether cgo was enabled; NVML whether NVML support is compiled
	// in (it needs cgo on Linux).
	CGO  bool `json:"cgo"`
	NVML bool `json:"nvml"`
	// Tags are the -tags the binary was built with, if any.
	Tags string `json:"build_tags,omitempty"`
}

// Read reads this binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	return From(bi, ok, inventory.NVMLBuilt)
}

// From turns the runtime's build information into Info; ok false (a
// binary built without module support) leaves only what the runtime
// itself knows. nvml is whether NVML support is compiled in; it stands
// for cgo too until the build settings say otherwise, since NVML needs it.
func From(bi *debug.BuildInfo, ok bool, nvml bool) Info {
	out := Info{Version: "(devel)", Module: "github.com/fgtop/fgtop", Go: runtime.Version(),
		OS: runtime.GOOS, Arch: runtime.GOARCH, CGO: nvml, NVML: nvml}
	if !ok || bi == nil {
		return out
	}
	if bi.Main.Version != "" {
		out.Version = bi.Main.Version
	}
	if bi.Main.Path != "" {
		out.Module = bi.Main.Path
	}
	if bi.GoVersion != "" {
		out.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		v := s.Value
		switch s.Key {
		case "vcs.revision":
			out.Revision = &v
		case "vcs.time":
			out.Time = &v
		case "vcs.modified":
			m := v == "true"
			out.Modified = &m
		case "CGO_ENABLED":
			out.CGO = v == "1"
		case "GOOS":
			out.OS = v
		case "GOARCH":
			out.Arch = v
		case "-tags":
			out.Tags = v
		}
	}
	return out
}

// Text is the human form, one fact a line.
func (b Info) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "fgtop %s (%s)\n", b.Version, b.Module)
	commit := "unknown (this build carries no VCS information)"
	if b.Revision != nil {
		commit = *b.Revision
		if b.Time != nil {
			commit += " (" + *b.Time + ")"
		}
		if b.Modified != nil && *b.Modified {
			commit += ", with uncommitted changes"
		}
	}
	fmt.Fprintf(&sb, "commit:  %s\n", commit)
	fmt.Fprintf(&sb, "go:      %s %s/%s\n", b.Go, b.OS, b.Arch)
	cgo, nvml := "off", "NVML support not compiled in (no GPU telemetry; mock devices only)"
	if b.CGO {
		cgo = "on"
	}
	if b.NVML {
		nvml = "NVML support compiled in (needs libnvidia-ml.so.1 at run time)"
	}
	fmt.Fprintf(&sb, "cgo:     %s, %s\n", cgo, nvml)
	if b.Tags != "" {
		fmt.Fprintf(&sb, "tags:    %s\n", b.Tags)
	}
	return sb.String()
}

// JSON is the document `fgtop version --json` prints, indented, with a
// final newline.
func (b Info) JSON() ([]byte, error) {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("version: encoding JSON: %w", err)
	}
	return append(out, '\n'), nil
}

// Date is the day of the VCS stamp (2026-11-25), "" where the build has
// none: the manual page's date.
func (b Info) Date() string {
	if b.Time != nil && len(*b.Time) >= 10 {
		return (*b.Time)[:10]
	}
	return ""
}
