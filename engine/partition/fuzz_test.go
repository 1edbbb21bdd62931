package partition

import (
	"slices"
	"strconv"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// FuzzParseIDRanges feeds core lists as operators type them (--cpu
// AGENT=0-7,16 and the console's cpu input): never a panic, and for
// numeric lists writing them back and reading again gives the same cores.
func FuzzParseIDRanges(f *testing.F) {
	for _, s := range []string{"0-7,16", "15", " 0 - 3 ", "3,1,2", "a, b", "7-3", "-1", "0-65537", ",,", "1,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := ParseIDRanges(s)
		if err != nil {
			return
		}
		if len(ids) == 0 {
			t.Fatal("no ids and no error")
		}
		nums := make([]int, 0, len(ids))
		for _, id := range ids {
			n, err := strconv.Atoi(string(id))
			if err != nil || n < 0 || strconv.Itoa(n) != string(id) {
				return // non-numeric ids are written as they are
			}
			nums = append(nums, n)
		}
		back, err := ParseIDRanges(IDRanges(ids))
		if err != nil {
			t.Fatalf("IDRanges(%q) = %q does not read back: %v", ids, IDRanges(ids), err)
		}
		slices.Sort(nums)
		want := make([]model.DeviceID, len(nums))
		for i, n := range nums {
			want[i] = model.DeviceID(strconv.Itoa(n))
		}
		if !slices.Equal(back, want) {
			t.Fatalf("round trip of %q: %q, want %q", s, back, want)
		}
	})
}
