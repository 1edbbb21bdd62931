package placement

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/partition"
	"github.com/fgtop/fgtop/model"
)

// ParseStep reads one step as written on the command line:
//
//   - "slot=amount[,slot=amount...]" is an allocation request, e.g.
//     "cuda.shares=1.2,cpu=2,mem=4g". Amounts are decimals kept exactly as
//     written ("0.20" stays 0.20); a slot of type bytes (mem) also takes a
//     binary size ("4g", "512m"). Slots keep their order; a slot given
//     twice is an error. An empty text is an empty request.
//   - A JSON object of slot → amount ({"cuda.shares": "0.2"}, the parity
//     corpus's form) is the same request, in key order.
//   - "free=N" or "free=kN" releases the allocation of the N-th allocation
//     request (1-based, counting allocation requests only).
//
// types gives the slot types (nil means model.DefaultSlotTypes).
func ParseStep(text string, types model.SlotTypes) (Step, error) {
	if types == nil {
		types = model.DefaultSlotTypes()
	}
	st := Step{Text: text}
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return st, nil
	}
	if k, v, ok := strings.Cut(trimmed, "="); ok && strings.EqualFold(strings.TrimSpace(k), "free") {
		v = strings.TrimSpace(v)
		num := strings.TrimPrefix(strings.TrimPrefix(v, "k"), "K")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || num != strconv.Itoa(n) {
			return st, fmt.Errorf("%q: free wants the 1-based number of an earlier allocation request (free=1 or free=k1)", text)
		}
		st.Free = n
		return st, nil
	}
	var pairs [][2]string
	if strings.HasPrefix(trimmed, "{") {
		kvs, err := decodeRawRequest([]byte(trimmed))
		if err != nil {
			return st, fmt.Errorf("%q: %w", text, err)
		}
		pairs = kvs
	} else {
		for _, part := range strings.Split(trimmed, ",") {
			k, v, ok := strings.Cut(part, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return st, fmt.Errorf("%q: want slot=amount[,slot=amount...] (e.g. cuda.shares=0.5,cpu=2,mem=4g) or free=N", text)
			}
			pairs = append(pairs, [2]string{k, v})
		}
	}
	seen := map[model.SlotName]bool{}
	for _, kv := range pairs {
		slot, v := model.SlotName(kv[0]), kv[1]
		if slot == "" {
			return st, fmt.Errorf("%q: empty slot name", text)
		}
		if seen[slot] {
			return st, fmt.Errorf("%q: slot %s given twice", text, slot)
		}
		seen[slot] = true
		amt, err := parseAmount(slot, v, types)
		if err != nil {
			return st, fmt.Errorf("%q: %w", text, err)
		}
		st.Request = append(st.Request, alloc.SlotAmount{Slot: slot, Amount: amt})
	}
	return st, nil
}

// CheckAmounts refuses a request an operator cannot have meant: no slot at
// all (an empty --request, often an unset shell variable), or an amount
// model.CheckAmount refuses (negative, too large for Backend.AI's
// decimals, or above 0 but below the 0.001 it keeps), the one rule plan
// and the editor apply to an agent's amounts too. Backend.AI's allocator
// quietly drops slots of 0 or less, so a negative amount would "succeed"
// with nothing allocated and hide the typo. Zero amounts pass: Backend.AI's
// own requests carry them for the slots they do not use ({"cuda.device":
// "0", "cuda.shares": "0.5"}); see AsksForNothing for a request of zeros
// only. Corpus cases are not checked: they are facts about the allocator,
// not an operator's input. A free step passes. types gives the bytes
// slots (nil means model.DefaultSlotTypes).
func (s Step) CheckAmounts(types model.SlotTypes) error {
	if s.IsFree() {
		return nil
	}
	if len(s.Request) == 0 {
		return fmt.Errorf("an empty request asks for nothing; want slot=amount[,slot=amount...] such as cuda.shares=0.5")
	}
	if types == nil {
		types = model.DefaultSlotTypes()
	}
	for _, e := range s.Request {
		bytes := types.TypeOf(e.Slot) == model.SlotTypeBytes
		if err := model.CheckAmount(e.Slot, e.Amount, bytes); err != nil {
			return fmt.Errorf("%s=%s: %w", e.Slot, e.Amount, err)
		}
		if bytes {
			continue
		}
		// A request reaches an agent through ResourceSlot.from_user_input,
		// which quantizes it to 0.001: a finer one (a JSON float's
		// 0.30000000000000004) is not what the manager would send, and
		// rounding it here would guess.
		if q, err := e.Amount.Quantize(model.AmountExp, apd.RoundHalfEven); err == nil && !q.Equal(e.Amount) {
			return fmt.Errorf("%s=%s: finer than the 0.001 Backend.AI keeps of a request's %s (the manager would ask %s); write that", e.Slot, e.Amount, e.Slot, q.Normalize())
		}
	}
	return nil
}

// AsksForNothing reports whether an allocation step names slots but every
// amount is 0: Backend.AI drops them all and allocates nothing, which an
// operator should be told.
func (s Step) AsksForNothing() bool {
	if s.IsFree() || len(s.Request) == 0 {
		return false
	}
	for _, e := range s.Request {
		if e.Amount.Sign() != 0 {
			return false
		}
	}
	return true
}

// parseAmount reads a slot amount: a binary size for bytes slots (plain
// numbers are bytes, and the size must be whole bytes), an exact decimal
// otherwise. NaN and infinities are refused.
func parseAmount(slot model.SlotName, v string, types model.SlotTypes) (model.Dec, error) {
	var amt model.Dec
	var err error
	if types.TypeOf(slot) == model.SlotTypeBytes {
		amt, err = model.ParseFiniteBinarySize(v)
		if err == nil {
			// The size parser drops a fraction of a byte: refused, as
			// plan's --mem refuses it.
			err = partition.CheckWholeBytes(v)
		}
	} else {
		amt, err = model.ParseDec(v)
	}
	if err != nil {
		return model.Dec{}, &AmountError{Slot: slot, Amount: v, Err: err}
	}
	if !amt.IsFinite() {
		return model.Dec{}, &AmountError{Slot: slot, Amount: v, Err: errors.New("not a finite amount")}
	}
	return amt, nil
}

// AmountError is a slot's amount that does not read. ParseStep gives it
// after the step's whole text; a caller that names the step otherwise
// (a line of an arrivals file) can say this alone, which names the amount.
type AmountError struct {
	Slot   model.SlotName
	Amount string // as written
	Err    error
}

func (e *AmountError) Error() string { return fmt.Sprintf("%s=%s: %v", e.Slot, e.Amount, e.Err) }
func (e *AmountError) Unwrap() error { return e.Err }

// FormatRequest writes a request the way ParseStep reads it.
func FormatRequest(r alloc.Request) string {
	parts := make([]string, len(r))
	for i, e := range r {
		parts[i] = string(e.Slot) + "=" + e.Amount.String()
	}
	return strings.Join(parts, ",")
}

// DeviceSlots lists the slots devs register, each once, in device order.
func DeviceSlots(devs []model.Device) []model.SlotName {
	var out []model.SlotName
	seen := map[model.SlotName]bool{}
	for _, d := range devs {
		if !seen[d.Slot] {
			seen[d.Slot] = true
			out = append(out, d.Slot)
		}
	}
	return out
}

// UnknownSlotIn reports the first slot named in a slot=amount[,...] text
// that is not among known (model.UnknownSlotError), or nil. A request that
// does not parse is judged by its names first: "mme=4g" is a typo of mem,
// not a count slot given a size. A free step or a JSON object names no
// slot here.
func UnknownSlotIn(text string, known []model.SlotName) error {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" || strings.HasPrefix(trimmed, "{") {
		return nil
	}
	for _, part := range strings.Split(trimmed, ",") {
		k, _, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.EqualFold(k, "free") {
			continue
		}
		if err := model.CheckSlot(model.SlotName(k), known); err != nil {
			return err //nolint:wrapcheck // names the slot and the node's slots
		}
	}
	return nil
}

// CheckSlots refuses a request naming a slot the node does not register
// (model.UnknownSlotError: "did you mean cuda.shares?"). Backend.AI's
// allocator would answer a typo with InsufficientResource and 0 free,
// which hides it. A slot of amount 0 passes: Backend.AI drops it, and its
// own requests carry zeros for slots the node may not have.
func CheckSlots(req alloc.Request, known []model.SlotName) error {
	for _, e := range req {
		if e.Amount.Sign() == 0 {
			continue
		}
		if err := model.CheckSlot(e.Slot, known); err != nil {
			return err //nolint:wrapcheck // names the slot and the node's slots
		}
	}
	return nil
}
