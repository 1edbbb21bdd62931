package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// The record companion's "no recovery.json" error is a cheap type, not
// fmt.Errorf: it must read and unwrap exactly as the fmt.Errorf it replaced
// (issues quote it).
func TestNoRecordErrorAsBefore(t *testing.T) {
	for _, path := range []string{"/s/k/config/recovery.json", "", "a b/ü:%w"} {
		got := recordCompanion().Fold(nil, path, nil, fs.ErrNotExist).recErr
		want := fmt.Errorf("%s: %w", path, fs.ErrNotExist)
		if got == nil || got.Error() != want.Error() || !errors.Is(got, fs.ErrNotExist) {
			t.Errorf("%q: got %v, want %v (wrapping fs.ErrNotExist)", path, got, want)
		}
	}
}
