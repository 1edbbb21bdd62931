package model

import (
	"fmt"

	"github.com/cockroachdb/apd/v3"
)

// AmountExp is the exponent of the finest count amount Backend.AI keeps:
// ResourceSlot.from_user_input quantizes a count slot's amount to 0.001
// (bytes slots are whole bytes).
const AmountExp = -3

// CheckAmount is the one rule for an amount an operator writes, in a
// request (simulate --request, fleet --fit) or an agent's slot (plan,
// apply, the editor): finite, not negative, and within what Backend.AI's
// decimals keep. A count amount is quantized to 0.001 in a 28-digit
// context: one too large for that (1e999) raises InvalidOperation there,
// and one above 0 that rounds to 0 (1E-30) is dropped as if not asked.
// Bytes amounts are whole bytes (BinarySize), so only sign and finiteness
// apply. The caller says the amount as written before the error's words.
func CheckAmount(slot SlotName, v Dec, bytes bool) error {
	fail := fmt.Errorf
	switch {
	case !v.IsFinite():
		return fail("not a finite amount")
	case v.Sign() < 0:
		return fail("a negative amount; Backend.AI refuses it")
	case bytes:
		return nil
	}
	q, err := v.Quantize(AmountExp, apd.RoundHalfEven)
	switch {
	case err != nil:
		return fail("too large: Backend.AI keeps amounts of %s to 0.001 in 28 significant digits", slot)
	case v.Sign() > 0 && q.IsZero():
		return fail("below 0.001, the finest amount of %s Backend.AI keeps (it rounds this to 0 and drops it)", slot)
	}
	return nil
}
