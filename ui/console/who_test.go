package console

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/internal/fake"

	"github.com/fgtop/fgtop/ui/render"
)

// TestFilterFields: the filter matches owners, sessions, session types,
// images and idle kernels, alone, together and inverted.
func TestFilterFields(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	typeKeys(a, "f") // all kernels
	tests := []struct {
		Filter string
		want   []string
	}{
		{"user:ed3a", []string{"1b9e0c44", "3f2a6c1e", "9a1b2c3d"}},
		{"USER:ED3A25B5-014E", []string{"1b9e0c44", "3f2a6c1e", "9a1b2c3d"}},
		{"project:6d5c", []string{"7d0e9b3a", "8e4c2a6f"}},
		{"session:21e330bf", []string{"c41a8f2d"}},
		{"type:batch", []string{"7d0e9b3a", "8e4c2a6f", "c41a8f2d"}},
		{"type:inf", []string{"9a1b2c3d"}},
		{"image:vllm", []string{"9a1b2c3d"}},
		{"is:idle", []string{"3f2a6c1e", "d2e3f4a5"}},
		{"is:idle user:9a7b", []string{"d2e3f4a5"}},
		{"!type:batch user:4c3b", nil},
		{"type:batch !numa0", []string{"c41a8f2d"}},
		{"! user:ed3a type:inter", []string{"d2e3f4a5"}},
		{"pytorch", []string{"3f2a6c1e", "c41a8f2d", "d2e3f4a5"}}, // plain text finds the image too
		{"nosuchfield:x", nil},
	}
	for _, tt := range tests {
		a.Update(keyRune('/'))
		a.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
		typeKeys(a, tt.Filter)
		a.Update(keyCode(tea.KeyEnter))
		var got []string
		for _, ki := range a.Kernels.Showing.Rows {
			got = append(got, a.d.Kernels[ki].Short)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("/%s: %v, want %v", tt.Filter, got, tt.want)
		}
	}
}

// TestHelpListsFilterFields: the help screen lists every filter field from
// the table the filter itself uses.
func TestHelpListsFilterFields(t *testing.T) {
	a := testApp(t, 160, 48, fake.Node(fake.Options{}), Options{})
	help := stripANSI(strings.Join(helpLines(a, 160), "\n"))
	for _, f := range render.FilterHelp() {
		if !strings.Contains(help, f[0]) || !strings.Contains(help, f[1]) {
			t.Errorf("help does not list %s", f[0])
		}
	}
}

// TestKernelDetailOwnerAndUse: the detail says whose the kernel is, its
// container, and its share beside what its processes use; an idle one
// says since when.
func TestKernelDetailOwnerAndUse(t *testing.T) {
	s := fake.Node(fake.Options{})
	a := testApp(t, 160, 48, s, Options{})
	detail := func(id string) string {
		ki, ok := a.d.KernelIndex(s.Kernel(kernelByPrefix(t, a, id)).ID)
		if !ok {
			t.Fatalf("no kernel %s", id)
		}
		var b strings.Builder
		for _, l := range kernelDetail(a.d, ki, &ageClock{now: fake.T0}) {
			for _, sp := range l.spans {
				b.WriteString(sp.Text)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	c := detail("c41a8f2d")
	for _, want := range []string{
		"owner user 9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d", "session 21e330bf-e15a-47a9-9183-df27ccd257b6  type batch",
		"image cr.backend.ai/stable/ngc-pytorch", "container " + fake.CID(s.Kernel(kernelByPrefix(t, a, "c41a8f2d")).ID),
		"Allocated against used", "held 0.60/1.00", "64%",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("kernel C detail lacks %q:\n%s", want, c)
		}
	}
	if b := detail("3f2a6c1e"); !strings.Contains(b, "holding but idle: 0 % since 09:26:00 (34m)") {
		t.Errorf("idle kernel detail:\n%s", b)
	}
	if m := detail("5a6b7c8d"); !strings.Contains(m, "no recovery.json") {
		t.Errorf("kernel without a record:\n%s", m)
	}
}

func kernelByPrefix(t *testing.T, a *App, p string) model.KernelID {
	t.Helper()
	for _, r := range a.d.Kernels {
		if strings.HasPrefix(string(r.K.ID), p) {
			return r.K.ID
		}
	}
	t.Fatalf("no kernel %s", p)
	return ""
}
