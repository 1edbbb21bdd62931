//go:build !unix

package safefile

// Elsewhere there are no FIFOs to hang on and no O_NOFOLLOW: the fstat
// check still refuses what is not a regular file.
const (
	oNonblock = 0
	oNoFollow = 0
)
