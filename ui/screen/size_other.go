//go:build !unix

package screen

import (
	"os"

	tea "charm.land/bubbletea/v2"
)

// watchSize does nothing where there is no SIGWINCH.
func watchSize(*os.File, func(tea.Msg)) (stop func()) { return func() {} }
