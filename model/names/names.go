// Package names finds a device, kernel, user, project or session by any
// name fgtop shows for it: a device by its id, its plugin key
// (cuda:<id>), the console's label (GPU1, MIG 4/0), its UUID or a unique
// prefix of one of those; the others by id or a unique prefix. One
// resolver serves every command and prompt that takes a name, so a name
// the console shows works everywhere, and a name that means nothing is
// an error listing what is known, never an empty answer.
package names

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fgtop/fgtop/model"
)

// listMax is how many known names an error lists before "and N more".
const listMax = 24

// NotFoundError is a name that matches nothing: Known lists what the
// source (Where: "the record", "this node") knows of that kind.
type NotFoundError struct {
	Kind, Name, Where string
	Known             []string
}

func (e *NotFoundError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("no %s %q: %s knows no %ss", e.Kind, e.Name, e.Where, e.Kind)
	}
	return fmt.Sprintf("no %s %q in %s, which knows %s", e.Kind, e.Name, e.Where, list(e.Known))
}

// AmbiguousError is a prefix that matches several: Candidates lists them.
type AmbiguousError struct {
	Kind, Name string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s %q is ambiguous: it names %s; give more of it", e.Kind, e.Name, list(e.Candidates))
}

// refusal matches the words of NotFoundError and AmbiguousError, after
// any prefix a program puts before an error ("fgtop: history: ").
var refusal = regexp.MustCompile(`(?:^|: )(?:no [a-z]+ "(?:[^"\\]|\\.)*"(?: in .*, which knows |: .* knows no )|[a-z]+ "(?:[^"\\]|\\.)*" is ambiguous: it names )`)

// IsRefusal reports whether msg, a line another fgtop printed (a node's
// stderr), is one of this package's errors: a name that matches nothing
// or several. An exit status alone cannot tell it from other usage
// errors (a flag a node of another version does not know).
func IsRefusal(msg string) bool { return refusal.MatchString(msg) }

func list(xs []string) string {
	if len(xs) <= listMax {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:listMax], ", ") + fmt.Sprintf(" and %d more", len(xs)-listMax)
}

// ID finds name among ids: the id itself, else the only id it is a
// prefix of (case ignored). kind ("kernel", "user") and where ("the
// record") word the errors.
func ID(name string, ids []string, kind, where string) (string, error) {
	if slices.Contains(ids, name) {
		return name, nil
	}
	var found []string
	low := strings.ToLower(name)
	for _, id := range ids {
		if name != "" && strings.HasPrefix(strings.ToLower(id), low) && !slices.Contains(found, id) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		known := slices.Clone(ids)
		slices.Sort(known)
		return "", &NotFoundError{Kind: kind, Name: name, Where: where, Known: slices.Compact(known)}
	}
	slices.Sort(found)
	return "", &AmbiguousError{Kind: kind, Name: name, Candidates: found}
}

// Devices resolves device names against a node's (or a record's)
// devices.
type Devices struct {
	devs   []model.Device
	labels map[model.DeviceKey]string
	where  string
}

// NewDevices is a resolver over devs; where words its errors ("the
// record", "this node").
func NewDevices(devs []model.Device, where string) *Devices {
	return &Devices{devs: devs, labels: Labels(devs), where: where}
}

// Label is the console's label of k ("" for CPU cores and memory).
func (d *Devices) Label(k model.DeviceKey) string { return d.labels[k] }

// Labels names a node's accelerators as the console does: GPUs by index
// (GPU0), other accelerators by plugin and index (rocm1), MIG slices by
// their GPU and slice (MIG 4/0).
func Labels(devs []model.Device) map[model.DeviceKey]string {
	out := map[model.DeviceKey]string{}
	var idx []int
	for i := range devs {
		d := &devs[i]
		switch {
		case !d.IsAccelerator():
		case d.IsMIG():
			out[d.Key()] = "MIG " + MIGSuffix(d.ID)
		default:
			idx = append(idx, i)
		}
	}
	for i, l := range GPULabels(devs, idx) {
		out[devs[i].Key()] = l
	}
	return out
}

// LabelsByID is Labels keyed by device id alone, for a node whose ids
// are unique across its plugins (simulate's devices, a fleet node's).
func LabelsByID(devs []model.Device) map[model.DeviceID]string {
	out := map[model.DeviceID]string{}
	for k, l := range Labels(devs) {
		out[k.ID] = l
	}
	return out
}

// MIGSuffix is the part of a MIG slice's id after its GPU ("4/0" of
// "GPU-x/4/0"), the id itself when it has none.
func MIGSuffix(id model.DeviceID) string {
	if _, rest, ok := strings.Cut(string(id), "/"); ok {
		return rest
	}
	return string(id)
}

// GPULabels names the devices devs[idx] as nvidia-smi does, by index
// ("GPU0"), and other accelerators by plugin and index ("rocm1"); when
// indices collide it falls back to the plugin name and position.
func GPULabels(devs []model.Device, idx []int) map[int]string {
	out := map[int]string{}
	seen := map[string]bool{}
	clash := false
	for _, i := range idx {
		dv := &devs[i]
		l := string(dv.Name) + strconv.Itoa(dv.Index)
		if dv.Name == "cuda" {
			l = "GPU" + strconv.Itoa(dv.Index)
		}
		if seen[l] {
			clash = true
		}
		seen[l] = true
		out[i] = l
	}
	if clash {
		for n, i := range idx {
			out[i] = string(devs[i].Name) + "#" + strconv.Itoa(n)
		}
	}
	return out
}

// Describe is k as the errors list it: the key and, where it has one,
// the console's label ("cuda:1 (GPU1)").
func (d *Devices) Describe(k model.DeviceKey) string {
	if l := d.labels[k]; l != "" {
		return k.String() + " (" + l + ")"
	}
	return k.String()
}

// Known lists every device as Describe words it, in the node's order.
func (d *Devices) Known() []string {
	out := make([]string, 0, len(d.devs))
	for i := range d.devs {
		out = append(out, d.Describe(d.devs[i].Key()))
	}
	return out
}

// cutEllipsis is the end of an abbreviated id ("…a104", "...a104"),
// lower case.
func cutEllipsis(name string) (string, bool) {
	for _, e := range []string{"…", "..."} {
		if t, ok := strings.CutPrefix(name, e); ok && t != "" {
			return strings.ToLower(t), true
		}
	}
	return "", false
}

// squash is a label as typed: case and spaces ignored ("mig4/0").
func squash(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }

// Resolve finds the device name names: its key (cuda:1), its label
// (GPU1, MIG 4/0; case and spaces ignored), its id (on cuda_open nodes
// the index), its UUID (with or without GPU-), the console's abbreviation
// of an id (…a104: a unique end), or a unique prefix of its key, id or
// UUID.
func (d *Devices) Resolve(name string) (model.DeviceKey, error) {
	name = strings.TrimSpace(name)
	var found []model.DeviceKey
	add := func(k model.DeviceKey) {
		if !slices.Contains(found, k) {
			found = append(found, k)
		}
	}
	// Exact forms first, each a complete name: the first that names
	// anything decides.
	exact := []func(dv *model.Device) bool{
		func(dv *model.Device) bool { return dv.Key().String() == name },
		func(dv *model.Device) bool { l := d.labels[dv.Key()]; return l != "" && squash(l) == squash(name) },
		func(dv *model.Device) bool { return string(dv.ID) == name },
		func(dv *model.Device) bool {
			u := strings.ToLower(strings.TrimPrefix(name, "GPU-"))
			return dv.UUID != "" && strings.ToLower(strings.TrimPrefix(dv.UUID, "GPU-")) == u
		},
	}
	for _, m := range exact {
		for i := range d.devs {
			if m(&d.devs[i]) {
				add(d.devs[i].Key())
			}
		}
		if len(found) > 0 {
			break
		}
	}
	if tail, ok := cutEllipsis(name); ok && len(found) == 0 {
		// The console's abbreviation of ids that share their beginning
		// (mock GPUs): an ellipsis and a unique end.
		for i := range d.devs {
			dv := &d.devs[i]
			if strings.HasSuffix(strings.ToLower(string(dv.ID)), tail) || dv.UUID != "" && strings.HasSuffix(strings.ToLower(dv.UUID), tail) {
				add(dv.Key())
			}
		}
	}
	if len(found) == 0 && name != "" {
		low := strings.ToLower(name)
		for i := range d.devs {
			dv := &d.devs[i]
			for _, s := range []string{dv.Key().String(), string(dv.ID), dv.UUID, "gpu-" + dv.UUID} {
				if s != "" && s != "gpu-" && strings.HasPrefix(strings.ToLower(s), low) {
					add(dv.Key())
					break
				}
			}
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return model.DeviceKey{}, &NotFoundError{Kind: "device", Name: name, Where: d.where, Known: d.Known()}
	}
	c := make([]string, len(found))
	for i, k := range found {
		c[i] = d.Describe(k)
	}
	return model.DeviceKey{}, &AmbiguousError{Kind: "device", Name: name, Candidates: c}
}

// Could reports whether name could name the device k, whose console
// label is label ("" for none), in any form Resolve takes, a prefix or
// abbreviation included, without asking whether it names others too.
func Could(k model.DeviceKey, label, name string) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		return false
	}
	low := strings.ToLower(name)
	if label != "" && squash(label) == squash(name) {
		return true
	}
	if tail, ok := cutEllipsis(name); ok {
		return strings.HasSuffix(strings.ToLower(string(k.ID)), tail)
	}
	return strings.HasPrefix(strings.ToLower(k.String()), low) || strings.HasPrefix(strings.ToLower(string(k.ID)), low)
}

// LabelIs reports whether name is the label as typed (case and spaces
// ignored: "mig4/0" is "MIG 4/0").
func LabelIs(label, name string) bool { return label != "" && squash(label) == squash(name) }
