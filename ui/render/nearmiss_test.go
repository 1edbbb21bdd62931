package render

import "testing"

// TestFilterNearMiss: a filter that matches nothing because a field name
// was mistyped says which field was meant; plain text that only has a
// colon in it (a device, a time) is left alone.
func TestFilterNearMiss(t *testing.T) {
	for _, c := range []struct{ filter, want string }{
		{"usr:bb31", "usr: is no filter field; user:?"},
		{"!sesion:9f", "sesion: is no filter field; session:?"},
		{"agent:a prjct:12", "prjct: is no filter field; project:?"},
		{"user:bb31", ""},
		{"cuda:3", ""},
		{"14:02", ""},
		{"id:3", ""},
		{"bb31", ""},
		{"dv:GPU1", "dv: is no filter field; dev:?"},
	} {
		if got := FilterNearMiss(c.filter); got != c.want {
			t.Errorf("%q: %q, want %q", c.filter, got, c.want)
		}
	}
}
