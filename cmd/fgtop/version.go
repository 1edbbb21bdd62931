package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/spf13/cobra"
)

// buildInfo is what `fgtop version` reports: enough to tell which source a
// binary came from and whether it can talk to NVML.
type buildInfo struct {
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

// readBuildInfo reads this binary's build information.
func readBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	return buildInfoFrom(bi, ok, inventory.NVMLBuilt)
}

// buildInfoFrom turns the runtime's build information into buildInfo; ok
// false (a binary built without module support) leaves only what the
// runtime itself knows.
func buildInfoFrom(bi *debug.BuildInfo, ok bool, nvml bool) buildInfo {
	out := buildInfo{Version: "(devel)", Module: "github.com/fgtop/fgtop", Go: runtime.Version(),
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

// text is the human form, one fact a line.
func (b buildInfo) text() string {
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

func writeVersion(w io.Writer, asJSON bool) error {
	b := readBuildInfo()
	if !asJSON {
		_, err := io.WriteString(w, b.text())
		return err
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("version: encoding JSON: %w", err)
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Version and build information (also fgtop --version)",
		Long: `Print fgtop's version and how it was built: module version, VCS revision, time and
whether the tree had uncommitted changes, the Go toolchain, cgo, and whether NVML support
is compiled in (a CGO_ENABLED=0 build reads mock devices only). --json for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}
