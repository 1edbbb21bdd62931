package main

import (
	"io"

	"github.com/fgtop/fgtop/internal/buildinfo"
	"github.com/spf13/cobra"
)

// buildInfo is what `fgtop version` reports (buildinfo.Info).
type buildInfo struct{ buildinfo.Info }

// readBuildInfo reads this binary's build information.
func readBuildInfo() buildInfo { return buildInfo{buildinfo.Read()} }

// text is the human form, one fact a line.
func (b buildInfo) text() string { return b.Text() }

func writeVersion(w io.Writer, asJSON bool) error {
	b := readBuildInfo()
	if !asJSON {
		_, err := io.WriteString(w, b.text())
		return err
	}
	out, err := b.JSON()
	if err != nil {
		return err
	}
	_, err = w.Write(out)
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
