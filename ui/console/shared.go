package console

import (
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// common is what every component of the main console shares, by pointer:
// the kit's shared state and what was derived from the adopted snapshot
// once for every view (nil before the first snapshot).
type common struct {
	*kit.Common
	d *render.Derived
	// memo keeps the last frames' expensive pieces (memo.go); nil draws
	// everything afresh.
	memo *viewMemo
}
