package main

import (
	"io"

	"github.com/fgtop/fgtop/internal/buildinfo"
	"github.com/spf13/cobra"
)

// writeVersion writes `fgtop version` (buildinfo.Info).
func writeVersion(w io.Writer, asJSON bool) error {
	b := buildinfo.Read()
	if !asJSON {
		_, err := io.WriteString(w, b.Text())
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
