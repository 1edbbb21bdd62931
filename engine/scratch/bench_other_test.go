//go:build unix && !linux

package scratch

import "syscall"

func openRaw(pathz []byte) (int, error) {
	return syscall.Open(string(pathz[:len(pathz)-1]), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
}
