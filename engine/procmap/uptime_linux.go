//go:build linux

package procmap

import "golang.org/x/sys/unix"

// clockMark is the mark /proc/uptime would give, from the clock it is read
// from: CLOCK_BOOTTIME, shifted like /proc/uptime and /proc/PID/stat's
// start times by a time namespace's offset, truncated to whole ticks as
// both files truncate. A clock read costs no open, read and parse of a
// file, which at rest was most of an idle NVML poll's work.
func clockMark() (Mark, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil || ts.Sec < 0 {
		return Mark{}, false
	}
	const tick = 1_000_000_000 / ClockTicks
	return Mark{Ticks: uint64(ts.Sec)*ClockTicks + uint64(ts.Nsec)/tick, OK: true}, true
}
