//go:build linux && (mips || mipsle || mips64 || mips64le)

package scratch

// sysOpenat2 is 0 on MIPS, whose tables are offset per ABI: the openat
// chain is used there instead.
const sysOpenat2 = 0
