package names

import (
	"errors"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// node is an fGPU node (UUID ids), a MIG GPU and CPU cores.
func node() []model.Device {
	return []model.Device{
		{Name: "cuda", ID: "GPU-8f2a1c3e", UUID: "8f2a1c3e-1111-2222-3333-444455556666", Index: 0},
		{Name: "cuda", ID: "GPU-8f2b9d01", UUID: "8f2b9d01-aaaa-bbbb-cccc-ddddeeeeffff", Index: 1},
		{Name: "cuda", ID: "GPU-c0ffee00/4/0", Parent: "GPU-c0ffee00", Index: 2},
		{Name: "cpu", ID: "0"},
		{Name: "cpu", ID: "1"},
	}
}

// openNode is a cuda_open node: the ids are the indices.
func openNode() []model.Device {
	return []model.Device{
		{Name: "cuda", ID: "0", Index: 0},
		{Name: "cuda", ID: "1", Index: 1},
		{Name: "cuda", ID: "12", Index: 12},
	}
}

func TestResolveDevice(t *testing.T) {
	for _, c := range []struct {
		devs            []model.Device
		name, want, bad string
	}{
		{devs: node(), name: "cuda:GPU-8f2b9d01", want: "cuda:GPU-8f2b9d01"},
		{devs: node(), name: "GPU1", want: "cuda:GPU-8f2b9d01"},
		{devs: node(), name: "gpu0", want: "cuda:GPU-8f2a1c3e"},
		{devs: node(), name: "MIG 4/0", want: "cuda:GPU-c0ffee00/4/0"},
		{devs: node(), name: "mig4/0", want: "cuda:GPU-c0ffee00/4/0"},
		{devs: node(), name: "GPU-8f2a1c3e", want: "cuda:GPU-8f2a1c3e"},
		{devs: node(), name: "8f2b9d01-aaaa-bbbb-cccc-ddddeeeeffff", want: "cuda:GPU-8f2b9d01"},
		{devs: node(), name: "GPU-8f2b", want: "cuda:GPU-8f2b9d01"},
		{devs: node(), name: "cuda:GPU-8f2a", want: "cuda:GPU-8f2a1c3e"},
		{devs: node(), name: "8f2b", want: "cuda:GPU-8f2b9d01"},
		{devs: node(), name: "GPU-8f2", bad: `device "GPU-8f2" is ambiguous: it names cuda:GPU-8f2a1c3e (GPU0), cuda:GPU-8f2b9d01 (GPU1)`},
		{devs: node(), name: "cpu:1", want: "cpu:1"},
		{devs: node(), name: "nosuch", bad: `no device "nosuch" in the record, which knows cuda:GPU-8f2a1c3e (GPU0), cuda:GPU-8f2b9d01 (GPU1), cuda:GPU-c0ffee00/4/0 (MIG 4/0), cpu:0, cpu:1`},
		{devs: node(), name: "", bad: `no device ""`},
		{devs: node(), name: "…9d01", want: "cuda:GPU-8f2b9d01"},
		{devs: node(), name: "...eeffff", want: "cuda:GPU-8f2b9d01"},
		{devs: node(), name: "…0", bad: `device "…0" is ambiguous`},
		{devs: openNode(), name: "1", want: "cuda:1"},
		{devs: openNode(), name: "cuda:1", want: "cuda:1"},
		{devs: openNode(), name: "GPU12", want: "cuda:12"},
		{devs: openNode(), name: "GPU2", bad: `no device "GPU2"`},
		{devs: nil, name: "cuda:0", bad: `no device "cuda:0": the record knows no devices`},
	} {
		k, err := NewDevices(c.devs, "the record").Resolve(c.name)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%q: got %v, %v; want the error %q", c.name, k, err, c.bad)
			}
			continue
		}
		if err != nil || k.String() != c.want {
			t.Errorf("%q: got %v, %v; want %s", c.name, k, err, c.want)
		}
	}
}

func TestResolveID(t *testing.T) {
	users := []string{"35e02027-c5ba-4d6c-9708-7623f41044c1", "35e0ffff-0000-4d6c-9708-7623f41044c1", "9a1b0000-0000-4000-8000-000000000000"}
	for _, c := range []struct {
		name, want, bad string
		ambiguous       bool
	}{
		{name: users[0], want: users[0]},
		{name: "35e02027", want: users[0]},
		{name: "9A1B", want: users[2]},
		{name: "35e0", ambiguous: true, bad: `user "35e0" is ambiguous: it names 35e02027-c5ba-4d6c-9708-7623f41044c1, 35e0ffff-0000-4d6c-9708-7623f41044c1`},
		{name: "nosuch", bad: `no user "nosuch" in the record, which knows 35e02027-`},
		{name: "", bad: `no user ""`},
	} {
		got, err := ID(c.name, users, "user", "the record")
		if c.bad != "" {
			var amb *AmbiguousError
			if err == nil || !strings.Contains(err.Error(), c.bad) || errors.As(err, &amb) != c.ambiguous {
				t.Errorf("%q: got %q, %v; want the error %q", c.name, got, err, c.bad)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %s", c.name, got, err, c.want)
		}
	}
}

// A long list is cut, saying how many it leaves out.
func TestNotFoundListsAtMostAFew(t *testing.T) {
	var ids []string
	for i := range 100 {
		ids = append(ids, strings.Repeat("k", 3)+string(rune('A'+i%26))+strings.Repeat("x", i/26))
	}
	_, err := ID("zzz", ids, "kernel", "the record")
	if err == nil || !strings.Contains(err.Error(), " and 76 more") {
		t.Fatalf("got %v", err)
	}
}

func TestCould(t *testing.T) {
	k := model.DeviceKey{Name: "cuda", ID: "GPU-8f2b9d01"}
	for _, c := range []struct {
		label, name string
		want        bool
	}{
		{"GPU1", "GPU1", true},
		{"GPU1", "gpu1", true},
		{"GPU1", "GPU9", false},
		{"GPU1", "gpu-8f2b", true},
		{"GPU1", "cuda:gpu-8f", true},
		{"GPU1", "…9d01", true},
		{"GPU1", "…9d02", false},
		{"GPU1", "GPU2", false},
		{"GPU1", "", false},
	} {
		if got := Could(k, c.label, c.name); got != c.want {
			t.Errorf("Could(%s, %q, %q) = %v", k, c.label, c.name, got)
		}
	}
}

// TestIsRefusal: the words of a name that matches nothing or several,
// as a node prints them after its prefixes, are told from every other
// usage error a node may exit 2 with.
func TestIsRefusal(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{(&NotFoundError{Kind: "kernel", Name: "zz", Where: "the record", Known: []string{"k1", "k2"}}).Error(), true},
		{"fgtop: history: " + (&NotFoundError{Kind: "user", Name: `a"b`, Where: "the record", Known: []string{"u"}}).Error(), true},
		{"fgtop: " + (&NotFoundError{Kind: "session", Name: "s", Where: "the record"}).Error(), true},
		{"fgtop: " + (&AmbiguousError{Kind: "device", Name: "GPU", Candidates: []string{"GPU0", "GPU1"}}).Error(), true},
		{"fgtop: unknown flag: --kernel-prefix", false},
		{"fgtop: history: --since: cannot read \"yesterday\" as a time", false},
		{"fgtop: no record in /var/lib/fgtop/history: run fgtop record", false},
		{"Error: unknown command \"history\" for \"fgtop\"", false},
		{"", false},
	} {
		if got := IsRefusal(c.msg); got != c.want {
			t.Errorf("IsRefusal(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
}
