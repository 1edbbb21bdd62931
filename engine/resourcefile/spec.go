package resourcefile

import (
	"fmt"
	"strconv"

	"github.com/fgtop/fgtop/model"
)

// Spec is one kernel's resource.txt as Backend.AI's
// KernelResourceSpec.read_from_string sees it, plus what the writer needs
// to reproduce the file.
type Spec struct {
	// ScratchSize is SCRATCH_SIZE in bytes (an integer; always 0 in
	// practice).
	ScratchSize model.Dec
	Mounts      []Mount
	// Slots is what the kernel requested (SLOTS=): exact bytes for mem.
	Slots model.ResourceSlot
	// SlotOrder is the SLOTS keys in JSON order (each key once).
	SlotOrder []model.SlotName
	// Alloc is the per-device allocation from the *_SHARES lines.
	Alloc model.Allocations
	// AllocOrder is the order Backend.AI iterates the allocations in:
	// device by device (each device where its first slot appeared), and
	// within a device its slots as first seen.
	AllocOrder []model.SlotName
	// DeviceOrder lists each slot's device ids in line order (an id given
	// twice keeps its first position and its last amount). The writer
	// appends ids it lacks in sorted order.
	DeviceOrder map[model.SlotName][]model.DeviceID
	// UnifiedDevices is whatever UNIFIED_DEVICES decoded to: normally a
	// []any of []any{device, slot} string pairs; nil, bool, int64, uint64,
	// float64, string, []any and Object are all possible. A missing or
	// empty line gives an empty []any.
	UnifiedDevices any
	// CID is the container id ("" when the file has none).
	CID string
	// Legacy is true for the pre-24.12 layout: CID first, or SLOTS written
	// by json.dumps (with spaces).
	Legacy bool
	// Extra holds every other KEY=VALUE line (plugin data such as
	// CUDA_GLOBAL_DEVICE_IDS), each key once, in first-appearance order
	// with its last value, for the writer.
	Extra []KV
	// Types are the slot types the file was read with; the writer formats
	// "bytes" slots as binary sizes.
	Types model.SlotTypes
}

// KV is one KEY=VALUE line.
type KV struct {
	Key, Value string
}

// UnifiedPairs returns the [device, slot] string pairs of UnifiedDevices,
// skipping entries of any other shape.
func (s *Spec) UnifiedPairs() [][2]string {
	list, _ := s.UnifiedDevices.([]any)
	var out [][2]string
	for _, x := range list {
		p, ok := x.([]any)
		if !ok || len(p) != 2 {
			continue
		}
		a, ok1 := p[0].(string)
		b, ok2 := p[1].(string)
		if ok1 && ok2 {
			out = append(out, [2]string{a, b})
		}
	}
	return out
}

// ParseError is a resource.txt that Backend.AI's reader would reject, or
// one fgtop will not trust yet (a torn write). Kind keeps the Python
// class for parity checks; Msg and Error are in fgtop's own words.
type ParseError struct {
	// File is the path, when known.
	File string
	// Line is the 1-based line the problem is on; 0 when it is not on one
	// line (a missing key, an empty file).
	Line int
	// Kind is the class name of the Python exception Backend.AI raises for
	// the same input (KeyError, ValueError, InvalidOperation,
	// JSONDecodeError, AttributeError, TypeError, OverflowError, Overflow),
	// "UnicodeDecodeError" for bytes that are not UTF-8, or "Torn".
	Kind string
	// Msg says what is wrong, without Python's exception text.
	Msg string
	// Torn is set for an empty file or one whose last line has no "\n":
	// most likely a write in progress.
	Torn bool
}

// Reason is the message for an operator: what is wrong and, unless the
// file is only still being written, that the agent cannot read it either.
func (e *ParseError) Reason() string {
	if e.Torn {
		return e.Msg
	}
	return e.Msg + " (Backend.AI's agent cannot read this file either)"
}

// Error formats the error as "path:line: reason", leaving out the parts
// that are unknown.
func (e *ParseError) Error() string {
	var b []byte
	if e.File != "" {
		b = append(b, e.File...)
		b = append(b, ':')
	}
	if e.Line > 0 {
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ':')
	}
	if len(b) > 0 {
		b = append(b, ' ')
	}
	b = append(b, e.Reason()...)
	return string(b)
}

// FormatError is a spec Backend.AI's write_to_string would fail on; Kind
// is the Python exception class (TypeError, ValueError, OverflowError,
// IndexError, InvalidOperation).
type FormatError struct {
	Kind string
	Msg  string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("resource.txt writer: %s: %s", e.Kind, e.Msg)
}
