package history

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestCommonPrefixSuffix(t *testing.T) {
	for _, c := range []struct {
		a, b   string
		p, s   int
		suffix bool
	}{
		{"", "", 0, 0, false}, {"abc", "abc", 3, 3, false}, {"abc", "abd", 2, 0, false}, {"xbc", "abc", 0, 2, false},
		{"held 2000.40 of 1.00", "held 2001.00 of 1.00", 8, 9, false},
		{"0123456789abcdefX", "0123456789abcdefY", 16, 0, false}, {"X0123456789abcdef", "Y0123456789abcdef", 0, 16, false},
		{"aaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaa", 10, 10, false},
	} {
		if p := commonPrefix(c.a, c.b); p != c.p {
			t.Errorf("commonPrefix(%q, %q) = %d, want %d", c.a, c.b, p, c.p)
		}
		if s := commonSuffix(c.a, c.b); s != c.s {
			t.Errorf("commonSuffix(%q, %q) = %d, want %d", c.a, c.b, s, c.s)
		}
	}
}

// Any list patched onto any other gives the list back.
func TestIssuesPatchRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	issue := func() model.Issue {
		return model.Issue{Severity: model.Severity(r.IntN(3)), Code: []string{"over-capacity", "unknown-device"}[r.IntN(2)],
			Message: fmt.Sprintf("cuda:%d is held beyond its capacity: %d.%02d of 1.00", r.IntN(4), r.IntN(3000), r.IntN(100)),
			Device:  model.DeviceKey{Name: "cuda", ID: model.DeviceID(fmt.Sprint(r.IntN(4)))}, Line: r.IntN(3)}
	}
	list := func() []model.Issue {
		var is []model.Issue
		for i := r.IntN(6); i > 0; i-- {
			is = append(is, issue())
		}
		return is
	}
	for round := 0; round < 2000; round++ {
		old := list()
		is := append([]model.Issue(nil), old...)
		// Edit some messages, replace some issues, grow or shrink.
		for i := range is {
			switch r.IntN(4) {
			case 0:
				is[i].Message = issue().Message
			case 1:
				is[i] = issue()
			}
		}
		switch r.IntN(3) {
		case 0:
			is = append(is, list()...)
		case 1:
			is = is[:r.IntN(len(is)+1)]
		}
		if len(is) == 0 {
			is = nil
		}
		e := enc{}
		encodeIssuesPatch(&e, old, is)
		d := dec{b: e.b}
		got := decodeIssuesPatch(&d, old)
		if d.err != nil || !reflect.DeepEqual(got, is) {
			t.Fatalf("round %d: %v\nold  %v\nwant %v\ngot  %v", round, d.err, old, is, got)
		}
	}
}

// FuzzIssuesPatch applies a patch of any bytes to a list: the answer is
// a list of the length the patch claims, or an error, never a panic.
func FuzzIssuesPatch(f *testing.F) {
	old := []model.Issue{{Code: "over-capacity", Message: "cuda:0 is held beyond its capacity: 1.50 of 1.00"},
		{Code: "unknown-device", Message: "3 kernel allocation(s) on cpu:1"}}
	is := append([]model.Issue(nil), old...)
	is[0].Message = "cuda:0 is held beyond its capacity: 1.70 of 1.00"
	is = append(is, model.Issue{Code: "x", Message: "new"})
	e := enc{}
	encodeIssuesPatch(&e, old, is)
	f.Add(e.b)
	f.Add([]byte{0})
	f.Add([]byte{2, 0, 1, 200, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		d := dec{b: b}
		got := decodeIssuesPatch(&d, old)
		if d.err == nil && len(got) > maxEntries {
			t.Fatalf("%d issues", len(got))
		}
		if d.err != nil && got != nil {
			t.Fatal("a list and an error")
		}
	})
}

// encodeIssue and encodeIssuesPatch name every field of model.Issue: a new
// one must be added there (and to the format) or it is not recorded.
func TestIssueFieldsCovered(t *testing.T) {
	if n := reflect.TypeOf(model.Issue{}).NumField(); n != 8 {
		t.Fatalf("model.Issue has %d fields; encodeIssue, decodeIssue and encodeIssuesPatch know 8", n)
	}
}
