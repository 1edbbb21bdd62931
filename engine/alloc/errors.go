package alloc

import (
	"fmt"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// Error kinds: the Python class name of the exception Backend.AI raises.
const (
	KindInsufficientResource         = "InsufficientResource"
	KindFractionalResourceFragmented = "FractionalResourceFragmented"
	KindNotMultipleOfQuantum         = "NotMultipleOfQuantum"
	KindInvalidResourceCombination   = "InvalidResourceCombination"
	KindInvalidResourceArgument      = "InvalidResourceArgument"
	// KindResourceError is the bare base class, raised by the discrete
	// EVENLY allocator after 100 rounds without progress.
	KindResourceError = "ResourceError"
	// KindIndexError is where Backend.AI's FractionAllocMap EVENLY crashes:
	// a request that rounds to 0.00 arrives when no device has 0.01 free.
	KindIndexError = "IndexError"
	// KindValueError: a requested device name missing from the allocation
	// order (alloc_order.index raises ValueError).
	KindValueError = "ValueError"
	// KindKeyError: a requested device name with no alloc map.
	KindKeyError = "KeyError"
	// KindInvalidOperation: decimal.InvalidOperation, e.g. a NaN amount.
	KindInvalidOperation = "InvalidOperation"
	// KindDivisionByZero: decimal.DivisionByZero, from the fragmentation
	// guard when the device it takes the capacity from has none.
	KindDivisionByZero = "DivisionByZero"
)

// Error is an allocation failure. Kind names the exception Backend.AI raises
// in the same situation, so callers (and the parity tests) can compare by
// name; use errors.As to get at it through wrapping, or errors.Is with one
// of the Err* sentinels.
type Error struct {
	kind string
	// Slot is the slot being allocated, when the failure concerns one.
	Slot model.SlotName
	// Msg is the human-readable detail: Backend.AI's own message for its
	// resource errors (InsufficientResource and the other ResourceError
	// kinds), fgtop's plain words where Python itself raises (ValueError,
	// KeyError, IndexError, InvalidOperation, DivisionByZero), so that no
	// interpreter text reaches an operator; Kind keeps the class name.
	Msg string
}

// Kind returns the Python exception class name, e.g. "InsufficientResource".
func (e *Error) Kind() string { return e.kind }

// Error returns the message: Backend.AI's str(e) where Backend.AI defines
// the rendering, else fgtop's plain words (see Msg).
func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrInsufficientResource) (and the other sentinels)
// match any *Error of the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.kind == e.kind
}

// IsResourceError reports whether Backend.AI's class derives from
// ResourceError: only those make resources.allocate() roll the maps back.
func (e *Error) IsResourceError() bool {
	switch e.kind {
	case KindInsufficientResource, KindFractionalResourceFragmented, KindNotMultipleOfQuantum,
		KindInvalidResourceCombination, KindInvalidResourceArgument, KindResourceError:
		return true
	}
	return false
}

// Sentinels for errors.Is; they match any *Error of their kind.
var (
	ErrInsufficientResource         = &Error{kind: KindInsufficientResource}
	ErrFractionalResourceFragmented = &Error{kind: KindFractionalResourceFragmented}
	ErrNotMultipleOfQuantum         = &Error{kind: KindNotMultipleOfQuantum}
	ErrInvalidResourceCombination   = &Error{kind: KindInvalidResourceCombination}
	ErrInvalidResourceArgument      = &Error{kind: KindInvalidResourceArgument}
	ErrResourceError                = &Error{kind: KindResourceError}
	ErrIndexError                   = &Error{kind: KindIndexError}
)

// tagPart renders the "(slot (tag: 'cuda'), " prefix Backend.AI's resource
// errors share.
func tagPart(slot model.SlotName, tag string) string {
	if tag == "" {
		return fmt.Sprintf("(%s, ", slot)
	}
	return fmt.Sprintf("(%s (tag: %s), ", slot, pyRepr(tag))
}

func errInsufficient(mapName string, slot model.SlotName, tag, what string, requested, total string) *Error {
	return &Error{
		kind: KindInsufficientResource,
		Slot: slot,
		Msg: fmt.Sprintf("InsufficientResource: %s: insufficient allocatable %s! %sallocating %s out of %s)",
			mapName, what, tagPart(slot, tag), requested, total),
	}
}

func errFragmented(slot model.SlotName, tag string, requested model.Dec, devs []devAlloc) *Error {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range devs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%s, %s)", pyRepr(string(d.id)), decRepr(d.alloc))
	}
	b.WriteByte(']')
	return &Error{
		kind: KindFractionalResourceFragmented,
		Slot: slot,
		Msg: fmt.Sprintf("FractionalResourceFragmented: FractionAllocMap: refusing to create kernel with "+
			"fractional resource fragmented! %sallocating %s from %s)", tagPart(slot, tag), requested, b.String()),
	}
}

func errNotMultiple(slot model.SlotName, requested model.Dec) *Error {
	return &Error{
		kind: KindNotMultipleOfQuantum,
		Slot: slot,
		Msg: fmt.Sprintf("Resource amount is not a multiple of the quantum. (Requested resource amount for %s is %s "+
			"but actual calculated amount is zero. This can happen if user requests resource amount smaller than "+
			"target device's quantum size.)", slot, requested),
	}
}

func errCombination(a, b model.SlotName) *Error {
	return &Error{
		kind: KindInvalidResourceCombination,
		Slot: a,
		Msg:  fmt.Sprintf("Invalid resource combination. (Slots %s and %s cannot be allocated at the same time.)", a, b),
	}
}

func errUnique(slot model.SlotName) *Error {
	return &Error{
		kind: KindInvalidResourceArgument,
		Slot: slot,
		Msg:  fmt.Sprintf("Invalid resource argument. (You may allocate only 1 for the unique-type slot %s)", slot),
	}
}

// errIndex is where Backend.AI's allocator would crash with IndexError;
// why says what it was reading.
func errIndex(slot model.SlotName, why string) *Error {
	return &Error{
		kind: KindIndexError,
		Slot: slot,
		Msg:  fmt.Sprintf("Backend.AI's FractionAllocMap crashes here for %s (%s)", slot, why),
	}
}

// errInvalidAmount is where Python's decimal raises InvalidOperation: a
// NaN or infinite amount, or a finite one too large to round to the
// quantum within the context's 28 significant digits.
func errInvalidAmount(slot model.SlotName, v model.Dec) *Error {
	msg := fmt.Sprintf("amount %s for %s is not a number", v, slot)
	if v.IsFinite() {
		msg = fmt.Sprintf("amount %s for %s is too large: rounded to the quantum it needs more than the %d significant digits Backend.AI's decimals keep",
			v, slot, model.PyContext.Precision)
	}
	return &Error{kind: KindInvalidOperation, Slot: slot, Msg: msg}
}

// pyRepr renders a string the way Python's repr() does for the plain ASCII
// ids and tags seen here: single quotes unless the text holds one.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
