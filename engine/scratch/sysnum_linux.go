//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package scratch

// sysOpenat2 is openat2's number in the system call table that every
// architecture added after Linux 5.1 shares.
const sysOpenat2 = 437
