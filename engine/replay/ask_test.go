package replay

import (
	"strings"
	"testing"
)

func TestAskOn(t *testing.T) {
	given := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, g := range names {
				if g == n {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		name string
		a    Ask
		on   bool
		err  string // "" none
	}{
		{"nothing", Ask{}, false, ""},
		{"a span", Ask{Span: "7d"}, true, ""},
		{"a file", Ask{Arrivals: "f.csv"}, true, ""},
		{"empty span given", Ask{Given: given("replay")}, false, `--replay "": want a span`},
		{"empty file given", Ask{Given: given("arrivals")}, false, `--arrivals "": want a file`},
		{"file and span", Ask{Arrivals: "f.csv", Span: "1d"}, false, "not the record: drop --replay"},
		{"file and suggest", Ask{Arrivals: "f.csv", Suggest: true}, false, "not the record: drop --suggest"},
		{"file and an empty span", Ask{Arrivals: "f.csv", Given: given("replay", "arrivals")}, false, "not the record: drop --replay"},
		{"an empty span and suggest", Ask{Suggest: true, Given: given("replay")}, false, `--replay "": want a span`},
		{"file, history and suggest", Ask{Arrivals: "f.csv", Dir: "/h", Suggest: true}, false, "drop --history and --suggest"},
		{"suggest alone", Ask{Suggest: true}, false, "--suggest needs --replay"},
		{"until alone", Ask{Until: "-1h"}, false, "--until is for --replay"},
		{"history alone", Ask{Dir: "/h"}, false, "--history is for --replay"},
		// The first flag in the command's own order is named, every time.
		{"since and history", Ask{Since: "-2h", Dir: "/h"}, false, "--since is for --replay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on, err := tc.a.On()
			if on != tc.on || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("On() = %v, %v; want %v, %q", on, err, tc.on, tc.err)
			}
		})
	}
}
