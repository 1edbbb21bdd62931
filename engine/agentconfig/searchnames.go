package agentconfig

import (
	"os"
	"path/filepath"
	"strings"
)

// SearchPlaces are SearchPaths as written for any user (the manual page):
// the environment variable by name rather than its value here, the home
// directory as ~, so that what is printed does not depend on who ran it.
func SearchPlaces() []string {
	home, _ := os.UserHomeDir()
	env := os.Getenv("BACKEND_CONFIG_FILE")
	out := []string{"$BACKEND_CONFIG_FILE"}
	for _, p := range SearchPaths() {
		if env != "" && p == env {
			continue
		}
		if home != "" && home != "/" && strings.HasPrefix(p, home+string(filepath.Separator)) {
			p = "~" + p[len(home):]
		}
		out = append(out, p)
	}
	return out
}
