package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/model/names"
	"github.com/fgtop/fgtop/ui/kit"
)

// Issue 28: history finds a device by every name fgtop shows for it (the
// plugin key, the console's label, a unique prefix of its id), a user by
// a prefix as the console's /user: does, and a name that means nothing
// exits 2 listing what the record knows, never "(nothing held ...)".
func TestHistoryNamesAsShown(t *testing.T) {
	dir := recordDemo(t, 20, 1500*time.Millisecond)
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := rd.History(history.Filter{})
	if err != nil || len(all.Intervals) == 0 {
		t.Fatalf("the demo's record holds nothing: %v", err)
	}
	iv := all.Intervals[len(all.Intervals)-1]
	key := iv.Device
	var devs []model.Device
	for _, d := range rd.Devices() {
		if d.IsAccelerator() {
			devs = append(devs, d)
		}
	}
	nd := names.NewDevices(devs, "the record")
	label := nd.Label(key)
	if label == "" {
		t.Fatalf("%s has no label among %v", key, nd.Known())
	}
	want, _, code := runChild(t, "history", "--history", dir, "--device", key.String())
	if code != 0 || !strings.Contains(want, string(iv.Kernel[:8])+" ") || strings.Contains(want, string(iv.Kernel)) {
		t.Fatalf("--device %s: exit %d, want %s cut to 8\n%s", key, code, iv.Kernel, want)
	}
	if whole, _, code := runChild(t, "history", "--history", dir, "--device", key.String(), "--no-trunc"); code != 0 || !strings.Contains(whole, string(iv.Kernel)) {
		t.Fatalf("--device %s --no-trunc: exit %d, want %s whole\n%s", key, code, iv.Kernel, whole)
	}
	// The label, and the id as the console abbreviates it.
	asked := []string{label, strings.ToLower(label)}
	var ids []string
	for _, d := range devs {
		ids = append(ids, string(d.ID))
	}
	for i, a := range kit.UniqueAbbrev(ids, "…") {
		if devs[i].Key() == key && a != string(key.ID) {
			asked = append(asked, a)
		}
	}
	// The shortest prefix of the id that names it alone.
	for n := 1; n < len(key.ID); n++ {
		if k, err := nd.Resolve(string(key.ID[:n])); err == nil && k == key {
			asked = append(asked, string(key.ID[:n]))
			break
		}
	}
	t.Logf("%s asked as %q", key, asked)
	for _, name := range asked {
		got, errOut, code := runChild(t, "history", "--history", dir, "--device", name)
		if code != 0 || got != want {
			t.Errorf("--device %q: exit %d, %s\n%s\nwant the listing of --device %s:\n%s", name, code, errOut, got, key, want)
		}
	}
	out, errOut, code := runChild(t, "history", "--history", dir, "--device", "nosuch")
	if code != 2 || out != "" || !strings.Contains(errOut, `no device "nosuch" in the record, which knows `) ||
		!strings.Contains(errOut, key.String()+" ("+label+")") {
		t.Errorf("--device nosuch: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// A user by the 8 characters the console shows.
	var user string
	for _, iv := range all.Intervals {
		if iv.User != "" {
			user = iv.User
			break
		}
	}
	if user == "" {
		t.Fatal("no interval has an owner")
	}
	full, _, code := runChild(t, "history", "--history", dir, "--user", user)
	short, errOut, code8 := runChild(t, "history", "--history", dir, "--user", user[:8])
	if code != 0 || code8 != 0 || short != full || !strings.Contains(full, user[:8]+" ") {
		t.Errorf("--user %s: exit %d, %s\n%s\nwant (exit %d)\n%s", user[:8], code8, errOut, short, code, full)
	}
	out, errOut, code = runChild(t, "history", "--history", dir, "--user", "nosuch")
	if code != 2 || out != "" || !strings.Contains(errOut, `no user "nosuch" in the record, which knows `) || !strings.Contains(errOut, user) {
		t.Errorf("--user nosuch: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// A prefix two devices share lists them (the demo's mock GPUs share
	// most of their ids).
	if len(devs) > 1 {
		a, b := string(devs[0].ID), string(devs[1].ID)
		n := 0
		for n < min(len(a), len(b))-1 && a[n] == b[n] {
			n++
		}
		if n > 0 {
			out, errOut, code = runChild(t, "history", "--history", dir, "--device", a[:n])
			if code != 2 || out != "" || !strings.Contains(errOut, "is ambiguous: it names ") ||
				!strings.Contains(errOut, nd.Describe(devs[0].Key())) || !strings.Contains(errOut, nd.Describe(devs[1].Key())) {
				t.Errorf("--device %s: exit %d\nstdout %s\nstderr %s", a[:n], code, out, errOut)
			}
		}
	}
	// A prefix two kernels share lists them.
	known, err := rd.Known()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(known.Kernels); i++ {
		a, b := known.Kernels[i-1], known.Kernels[i]
		if a[0] != b[0] {
			continue
		}
		out, errOut, code = runChild(t, "history", "--history", dir, "--kernel", a[:1])
		if code != 2 || out != "" || !strings.Contains(errOut, "is ambiguous: it names ") || !strings.Contains(errOut, a) || !strings.Contains(errOut, b) {
			t.Errorf("--kernel %s: exit %d\nstdout %s\nstderr %s", a[:1], code, out, errOut)
		}
		return
	}
	t.Logf("no two kernels of %d share a first character", len(known.Kernels))
}
