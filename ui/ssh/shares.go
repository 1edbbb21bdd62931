package sshserve

// LeastMaxSessions is the least MaxSessions, from maxSessions up, whose
// shares (Shares of viewers and streams, those not given growing with it)
// leave operators' consoles a slot: maxSessions itself where its shares
// do. fgtop serve says it when it refuses shares that leave none.
func LeastMaxSessions(maxSessions, viewers, streams int) int {
	n := max(maxSessions, 1)
	for {
		if v, s := Shares(n, viewers, streams); n-v-s >= 1 {
			return n
		}
		n++
	}
}
