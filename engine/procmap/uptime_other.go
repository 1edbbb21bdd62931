//go:build !linux

package procmap

// clockMark has no clock to read off Linux: the mark comes from the file.
func clockMark() (Mark, bool) { return Mark{}, false }
