package agentconfig

import (
	"os"
	"os/user"
)

// LocalOperator is the person running fgtop on this host's command line
// or console, as an operator (the file's own permissions decide the
// rest). Under sudo it is SUDO_USER, the person rather than root; else
// the login. Its origin is "cli@HOST", or "cli" when the host name cannot
// be read.
func LocalOperator() Actor {
	name := os.Getenv("SUDO_USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	origin := "cli"
	if host, err := os.Hostname(); err == nil {
		origin = "cli@" + host
	}
	return Actor{Name: name, Origin: origin, Role: RoleOperator}
}
