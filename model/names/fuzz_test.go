package names

import (
	"errors"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// FuzzResolve: any typed name resolves to one of the devices, or is an
// error of the two kinds that list what is known; it never panics, and a
// name Could names is never refused as naming nothing.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"GPU1", "gpu0", "MIG 4/0", "mig4/0", "…9d01", "...ffff", "…", "...", "cuda:", ":", "GPU-", "8f2", "cpu:1", "", " ", "\x00", "GPU-8f2b9d01/"} {
		f.Add(s)
	}
	devs := append(node(), openNode()...)
	nd := NewDevices(devs, "the record")
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 256 {
			return
		}
		k, err := nd.Resolve(name)
		var nf *NotFoundError
		var amb *AmbiguousError
		switch {
		case err == nil:
			if !slices.ContainsFunc(devs, func(d model.Device) bool { return d.Key() == k }) {
				t.Fatalf("%q resolved to %s, not a device", name, k)
			}
		case errors.As(err, &amb):
			if len(amb.Candidates) < 2 {
				t.Fatalf("%q ambiguous among %v", name, amb.Candidates)
			}
		case errors.As(err, &nf):
			for _, d := range devs {
				if Could(d.Key(), nd.Label(d.Key()), name) {
					t.Fatalf("%q names nothing, yet could name %s", name, d.Key())
				}
			}
		default:
			t.Fatalf("%q: %v", name, err)
		}
		if _, err := ID(name, []string{"35e02027-c5ba", "35e0ffff", "9a1b"}, "user", "the record"); err != nil && !errors.As(err, &nf) && !errors.As(err, &amb) {
			t.Fatalf("ID %q: %v", name, err)
		}
	})
}
