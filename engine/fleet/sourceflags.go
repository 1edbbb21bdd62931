package fleet

// sshOnly and promOnly are fgtop fleet's flags that one source reads and
// the other never does: given to the other, each was dropped without a
// word (--hosts ... --refresh 10s still streamed every --heartbeat).
var (
	sshOnly  = []string{"identity", "known-hosts", "user", "heartbeat"}
	promOnly = []string{"refresh", "lookback"}
)

// ForeignFlag returns the first flag given (changed) that the fleet's
// source does not read (prometheus: the source is --prometheus, else
// --hosts) and the source that reads it; "" when there is none.
func ForeignFlag(changed func(name string) bool, prometheus bool) (flag, source string) {
	names, source := promOnly, "--prometheus"
	if prometheus {
		names, source = sshOnly, "--hosts"
	}
	for _, n := range names {
		if changed(n) {
			return n, source
		}
	}
	return "", ""
}
