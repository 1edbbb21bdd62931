//go:build linux

package procmap

import "golang.org/x/sys/unix"

// clockMark is CLOCK_BOOTTIME in nanoseconds: the clock /proc/uptime and
// /proc/PID/stat's start times are read from (shifted alike by a time
// namespace's offset; both files truncate it to whole ticks). A clock
// read costs no open, read and parse of a file, which at rest was most of
// an idle NVML poll's work.
func clockMark() (nanos uint64, ok bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil || ts.Sec < 0 || ts.Nsec < 0 {
		return 0, false
	}
	return uint64(ts.Sec)*1_000_000_000 + uint64(ts.Nsec), true
}
