package ui

// common is what every component of the main console shares, by pointer:
// the kit's shared state and what was derived from the adopted snapshot
// once for every view (nil before the first snapshot).
type common struct {
	*kitCommon
	d *derived
}
