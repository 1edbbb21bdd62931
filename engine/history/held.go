package history

import "github.com/fgtop/fgtop/model"

// Held is an arrival's allocation as the sessions walk keeps it
// (SessionsListHeld): its entries' places in a table of the walk's
// distinct entries, each slot's devices together, each slot and each of
// its devices once. A busy week's 200,000 arrivals hold 1.2 million
// entries of 2,000 distinct ones; their maps (Map) were 55 MB of the
// read's live heap, all of it marked by every collection and each page
// of it fresh, for a replay that walks each arrival's entries once.
// A Held is never changed once made; the zero Held holds nothing.
type Held struct {
	ents []uint32
	tab  *heldTab
	n    int32
}

// heldTab is the walk's table of distinct entries, set when the walk
// ends: Helds are read only after it.
type heldTab struct{ ents []allocEnt }

// IsZero reports whether h is the zero Held.
func (h Held) IsZero() bool { return h.tab == nil }

// Len is how many entries (a slot's amount on a device) h holds.
func (h Held) Len() int { return len(h.ents) }

// At is entry i: a slot, a device and the amount of the slot held on it.
func (h Held) At(i int) (model.SlotName, model.DeviceID, model.Dec) {
	e := &h.tab.ents[h.ents[i]]
	return e.slot, e.dev, e.amt
}

// Place is entry i's place in the table of the entries of h's list
// (SessionList): two entries of one list at one place are equal, their
// amounts one Dec.
func (h Held) Place(i int) int { return int(h.ents[i]) }

// Map is h as the maps KernelSession.Alloc gives (nil for the zero
// Held), made anew at each call.
func (h Held) Map() model.Allocations {
	if h.tab == nil {
		return nil
	}
	fa := keptAlloc(make([]allocEnt, 0, len(h.ents)), h.tab.ents, h.ents, h.n)
	return fa.toMap()
}
