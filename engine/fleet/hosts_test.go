package fleet

import (
	"strings"
	"testing"
)

func TestParseHosts(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  string
	}{
		{"a:1,b:2", "a:1 b:2", ""},
		{"# fleet\nnode01   # rack 1\nnode02:2200\n\n10.0.0.3, node01", "node01:2222 node02:2200 10.0.0.3:2222", ""},
		{"[::1]:2222 ::1", "[::1]:2222", ""},
		{"a:0", "", "port"},
		{"a:x", "", "port"},
		{":22", "", "no host"},
		{"user@host:22", "", "not a host"},
		{"# only comments\n", "", "no hosts"},
	}
	for _, c := range cases {
		got, err := ParseHosts(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err %v, want %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && strings.Join(got, " ") != c.want:
			t.Errorf("%q: %q, want %q", c.in, strings.Join(got, " "), c.want)
		}
	}
}

// FuzzParseHosts: a hosts file never crashes the parser, and every host
// it accepts is a HOST:PORT that parses again to itself.
func FuzzParseHosts(f *testing.F) {
	f.Add("node01\nnode02:2200 # c\n[::1]:22,a")
	f.Fuzz(func(t *testing.T, text string) {
		hosts, err := ParseHosts(text)
		if err != nil {
			return
		}
		for _, h := range hosts {
			again, err := ParseHosts(h)
			if err != nil || len(again) != 1 || again[0] != h {
				t.Fatalf("%q: parses again to %q, %v", h, again, err)
			}
		}
	})
}
