//go:build !linux

package procmap

// clockMark has no clock to read off Linux: the mark comes from the file.
func clockMark() (nanos uint64, ok bool) { return 0, false }
