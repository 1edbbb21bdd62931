package model

import (
	"fmt"
	"slices"
	"strings"
)

// UnknownSlotError is a slot name the node does not register: almost always
// a typo (cuda.shres), which Backend.AI's allocator would only answer with
// "InsufficientResource ... 0 free".
type UnknownSlotError struct {
	Slot SlotName
	// Known are the node's slots, sorted.
	Known []SlotName
	// Suggest is the known slot the name most likely meant, "" if none is
	// close.
	Suggest SlotName
}

func (e *UnknownSlotError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown slot %q", string(e.Slot))
	if e.Suggest != "" {
		fmt.Fprintf(&b, ": did you mean %s?", e.Suggest)
	}
	names := make([]string, len(e.Known))
	for i, k := range e.Known {
		names[i] = string(k)
	}
	if len(names) == 0 {
		b.WriteString(" (the node registers no slots)")
	} else {
		fmt.Fprintf(&b, " (the node's slots: %s)", strings.Join(names, ", "))
	}
	return b.String()
}

// CheckSlot refuses a slot name that is not among known, suggesting the
// closest known name. known may hold duplicates and be in any order.
func CheckSlot(slot SlotName, known []SlotName) error {
	if slices.Contains(known, slot) {
		return nil
	}
	ks := slices.Clone(known)
	slices.Sort(ks)
	ks = slices.Compact(ks)
	return &UnknownSlotError{Slot: slot, Known: ks, Suggest: closestSlot(slot, ks)}
}

// closestSlot is Closest over slot names.
func closestSlot(s SlotName, known []SlotName) SlotName {
	ks := make([]string, len(known))
	for i, k := range known {
		ks[i] = string(k)
	}
	return SlotName(Closest(string(s), ks))
}

// Closest is the known name that s most likely misspells, "" if none is
// close: the one at the smallest edit distance, when that distance is small
// for the name's length (a typo, not another name); a case difference
// alone always counts as close. fgtop's "did you mean" (slots, agent.toml
// keys, the console's commands) all ask it, so that they agree on what a
// typo is. known may be in any order; where two names are as near, or
// two begin alike, there is no answer: naming one would be a guess.
func Closest(s string, known []string) string {
	known = slices.Clone(known)
	slices.Sort(known)
	best, bestD, ties := "", -1, 0
	for _, k := range known {
		if strings.EqualFold(k, s) {
			return k
		}
		d := EditDistance(strings.ToLower(s), strings.ToLower(k))
		switch {
		case bestD < 0 || d < bestD:
			best, bestD, ties = k, d, 1
		case d == bestD && k != best:
			ties++
		}
	}
	// A name all of whose letters are wrong (:x for :q) is not a typo of
	// it; two names as near are no answer (i-node-numa2 is as much numa0
	// as numa1: naming one would be a guess).
	limit := max(1, min(3, len(s)/4))
	if bestD >= 0 && bestD <= limit && bestD < len(s) {
		if ties > 1 {
			return ""
		}
		return best
	}
	// One name beginning the other ("memory" for mem) is the name meant,
	// where the shorter has 3 letters or more, and only one name does.
	ls := strings.ToLower(s)
	match := ""
	for _, k := range known {
		lk := strings.ToLower(k)
		if min(len(ls), len(lk)) >= 3 && (strings.HasPrefix(ls, lk) || strings.HasPrefix(lk, ls)) {
			if match != "" && match != k {
				return ""
			}
			match = k
		}
	}
	return match
}

// DidYouMean is " (did you mean X?)" for the known name s most likely
// misspells (Closest), "" when none is close: the words every error
// about an unknown name adds after the name.
func DidYouMean(s string, known []string) string {
	if c := Closest(s, known); c != "" {
		return " (did you mean " + c + "?)"
	}
	return ""
}

// EditDistance is the Damerau (optimal string alignment) distance between
// a and b, in bytes: an omitted, extra, wrong or swapped letter costs 1.
func EditDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b)) // names are short; bound the work
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
