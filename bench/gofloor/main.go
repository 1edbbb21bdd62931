// Command gofloor is the floor of a Go program at rest for issue 29: one
// time.Ticker at 1 s and one short line written to its terminal on each
// tick, the line's text changing every second (a counter and the time), as
// a console's clock line would. Nothing else runs: no input reader, no
// signal handler, no allocation beyond the line.
//
// bench/idle-vs-nvtop.sh runs it beside nvtop and fgtop (GOFLOOR=1) in its
// own tmux, so what it costs is what any Go program that wakes once a
// second pays in the same windows: the runtime's monitor thread (sysmon),
// the scheduler's idle-P handoffs and the timer's netpoll wake-up.
// GOMAXPROCS and GODEBUG in its environment are the runtime's own knobs;
// the script passes GOFLOOR_ENV through to it.
//
//	go build -o /tmp/gofloor ./bench/gofloor && /tmp/gofloor
package main

import (
	"os"
	"strconv"
	"time"
)

func main() {
	buf := make([]byte, 0, 64)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	// Clear the screen once so the harness can find the line.
	_, _ = os.Stdout.WriteString("\x1b[2J\x1b[H")
	for n := 1; ; n++ {
		now := <-t.C
		buf = append(buf[:0], "\x1b[Hgofloor tick "...)
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, ' ')
		buf = now.AppendFormat(buf, "15:04:05")
		buf = append(buf, "\x1b[K"...)
		if _, err := os.Stdout.Write(buf); err != nil {
			os.Exit(1)
		}
	}
}
