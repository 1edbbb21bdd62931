package fleet

import "os"

// RecordNames are the names a node's record may give it: the command's
// own (serve's or exporter's --node, or the host name), and, on a real
// node (not demo), the host name, which `fgtop record` beside serve
// (contrib/fgtop-record.service) records under whatever --node serve is
// given. The demo node's record is its own: the host's is not the demo's.
// They are what a recorder takes as this node's (history.Options.Names)
// and what the fleet's readers answer for (RecordAt, RecordHistory's
// self).
func RecordNames(node string, demo bool) []string {
	return recordNamesOf(node, demo, os.Hostname)
}

// recordNamesOf is RecordNames with the host's name from hostname.
func recordNamesOf(node string, demo bool, hostname func() (string, error)) []string {
	var names []string
	if node != "" {
		names = append(names, node)
	}
	if !demo {
		if h, err := hostname(); err == nil && h != "" && h != node {
			names = append(names, h)
		}
	}
	return names
}
