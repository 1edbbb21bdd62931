package report

import (
	"io"

	"github.com/fgtop/fgtop/model"
)

// WriteForm writes s to w in form (FormSnapshot, FormAllocRatio,
// FormAllocAbsolute), indented or on one line. The whole document, most
// of it the kernels, is written as its parts are made rather than first
// copied into one buffer; a map is small and written at once.
func WriteForm(w io.Writer, s *model.Snapshot, form string, indent bool) error {
	if form == FormSnapshot {
		return WriteSnapshot(w, s, indent)
	}
	return WriteValue(w, s, form, indent)
}

// WriteValue writes s to w in form as one write: the document made whole
// first (Marshal of Value), as a one-shot snapshot of the live node is
// printed.
func WriteValue(w io.Writer, s *model.Snapshot, form string, indent bool) error {
	b, err := Marshal(Value(s, form), indent)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
