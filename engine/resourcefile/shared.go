package resourcefile

import (
	"strings"
	"sync"

	"github.com/fgtop/fgtop/model"
)

// Shared holds what the specs parsed with it (ParseOptions.Shared) have in
// common, so that each is kept once instead of once per spec: device ids
// and slot names, the Slots (and SlotOrder) of identical SLOTS lines, and,
// with FiguresOnly, the per-device map of identical *_SHARES lines. On a
// node where thousands of kernels were started from a few presets most of
// those lines repeat, and a repeated line is neither parsed nor stored
// again: the values are a pure function of the line's text (and, for
// *_SHARES, of whether the slot is a bytes slot), so a spec built from a
// shared value is the spec the line would parse to. Lines that fail to
// parse are never shared; they are parsed (and fail) every time.
//
// Specs parsed with a Shared share maps and slices with each other: they
// must be treated as read-only, as the engine treats them.
//
// Each table stops growing at maxSharedValues entries (then new values are
// simply not shared), so a long-running watcher that sees endless distinct
// lines keeps a bounded table. A Shared is safe for concurrent use.
type Shared struct {
	mu    sync.Mutex
	names map[string]string
	slots map[string]*sharedSlots
	lines map[lineKey]map[model.DeviceID]model.Dec
}

// maxSharedValues bounds each table of a Shared (a few hundred KB at most).
const maxSharedValues = 4096

// sharedSlots is the parse of one SLOTS text.
type sharedSlots struct {
	slots  model.ResourceSlot
	order  []model.SlotName
	spaced bool
}

// lineKey names the parse of one *_SHARES line: the slot, whether its
// amounts are binary sizes, and the value text.
type lineKey struct {
	slot  model.SlotName
	bytes bool
	val   string
}

// NewShared returns an empty Shared.
func NewShared() *Shared {
	return &Shared{
		names: map[string]string{},
		slots: map[string]*sharedSlots{},
		lines: map[lineKey]map[model.DeviceID]model.Dec{},
	}
}

// name returns the shared copy of s, which points into memory the parser
// reuses and is never kept itself.
func (sh *Shared) name(s string) string {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if v, ok := sh.names[s]; ok {
		return v
	}
	c := strings.Clone(s)
	if len(sh.names) < maxSharedValues {
		sh.names[c] = c
	}
	return c
}

func (sh *Shared) slotsOf(text string) *sharedSlots {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.slots[text]
}

func (sh *Shared) putSlots(text string, v *sharedSlots) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.slots) < maxSharedValues {
		sh.slots[strings.Clone(text)] = v
	}
}

func (sh *Shared) line(k lineKey) map[model.DeviceID]model.Dec {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.lines[k]
}

func (sh *Shared) putLine(k lineKey, m map[model.DeviceID]model.Dec) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.lines) < maxSharedValues {
		k.val = strings.Clone(k.val)
		sh.lines[k] = m
	}
}
