package metrics

// ValidNode says s may name a node in every series' node label: not
// empty, no control characters (a label value is printed into terminals
// and dashboards), and at most a host name's 253 bytes.
func ValidNode(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
