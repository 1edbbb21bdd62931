package resourcefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// tornCases are the cases whose input is empty or lacks a final "\n". They
// are the package's one deliberate difference from Backend.AI: Parse
// reports them as torn (a write in progress) where Python parses them. The
// parity test checks each of them against Python through
// ParseOptions{AllowTorn: true} and checks that Parse says "Torn".
var tornCases = map[string]string{
	"valid-base-no-trailing-newline": "last line unterminated; Python parses it",
	"empty-file":                     "empty; Python raises KeyError 'MOUNTS'",
	"cr-only":                        "ends in \\r; Python raises KeyError 'MOUNTS'",
}

// fixturesDir is the repo's copy of the shared fixtures
// (testdata/fixtures at the module root).
func fixturesDir(t testing.TB) string {
	t.Helper()
	return testfix.Dir(t)
}

// ordered is a JSON object with its key order.
type ordered []orderedMember

type orderedMember struct {
	key string
	val any
}

func (o ordered) get(k string) (any, bool) {
	for _, m := range o {
		if m.key == k {
			return m.val, true
		}
	}
	return nil, false
}

// decodeOrdered reads one JSON value keeping object key order; numbers
// stay json.Number.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var o ordered
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o = append(o, orderedMember{kt.(string), v})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
	}
	return tok, nil
}

type parityCase struct {
	id       string
	input    string
	types    model.SlotTypes
	expected ordered
}

func loadCases(t testing.TB, path string) []parityCase {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("parity corpus %s is absent; nothing to compare against", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := decodeOrdered(dec)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []parityCase
	for _, x := range root.([]any) {
		c := x.(ordered)
		id, _ := c.get("id")
		in, _ := c.get("input")
		kst, _ := c.get("known_slot_types")
		exp, _ := c.get("expected")
		types := model.SlotTypes{}
		for _, m := range kst.(ordered) {
			types[model.SlotName(m.key)] = model.SlotType(m.val.(string))
		}
		out = append(out, parityCase{id: id.(string), input: in.(string), types: types, expected: exp.(ordered)})
	}
	return out
}

// TestParity runs every case of fixtures/resource-cases.json (or the file
// named by FGTOP_RESOURCE_CASES) and requires Backend.AI's exact result:
// slots (str(Decimal) strings, key order), allocations (device, slot and
// device-id order), scratch_disk_size, mounts, unified_devices, and the
// exception class name on failure. The informational "rewritten" text is
// checked against FormatStrict too.
func TestParity(t *testing.T) {
	path := os.Getenv("FGTOP_RESOURCE_CASES")
	if path == "" {
		path = filepath.Join(fixturesDir(t), "resource-cases.json")
	}
	cases := loadCases(t, path)
	// One Shared for every case, as the engine has one for every file:
	// values shared by one case must be right for any other.
	shared := NewShared()
	pass := 0
	torn := map[string]bool{}
	for _, c := range cases {
		ok := t.Run(c.id, func(t *testing.T) {
			data := []byte(c.input)
			spec, err := ParseOptions{AllowTorn: true}.Parse(data, c.types)
			checkExpected(t, spec, err, c.expected)

			// FiguresOnly reads the same figures and fails the same way.
			fspec, ferr := ParseOptions{AllowTorn: true, FiguresOnly: true}.Parse(data, c.types)
			if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() {
				t.Fatalf("FiguresOnly disagrees: %v vs %v", ferr, err)
			}
			if spec != nil {
				if fspec.Mounts != nil || fspec.Extra != nil || fspec.DeviceOrder != nil {
					t.Errorf("FiguresOnly kept writer data")
				}
				if fspec.CID != spec.CID {
					t.Errorf("FiguresOnly CID %q, full parse %q", fspec.CID, spec.CID)
				}
				fspec.Mounts, fspec.Extra, fspec.CID, fspec.DeviceOrder = spec.Mounts, spec.Extra, spec.CID, spec.DeviceOrder
				if !bytes.Equal(fspec.Format(), spec.Format()) || canon(allocTree(fspec)) != canon(allocTree(spec)) {
					t.Errorf("FiguresOnly figures differ")
				}
			}

			// With a Shared, the first parse fills it and the second takes
			// the shared values: both read what the plain parse reads.
			for pass := range 2 {
				sh, sherr := ParseOptions{AllowTorn: true, FiguresOnly: true, Shared: shared}.Parse(data, c.types)
				if (err == nil) != (sherr == nil) || err != nil && err.Error() != sherr.Error() {
					t.Fatalf("Shared parse %d disagrees: %v vs %v", pass, sherr, err)
				}
				if spec == nil {
					continue
				}
				sh.Mounts, sh.Extra, sh.CID, sh.DeviceOrder = spec.Mounts, spec.Extra, spec.CID, spec.DeviceOrder
				if !bytes.Equal(sh.Format(), spec.Format()) || canon(allocTree(sh)) != canon(allocTree(spec)) {
					t.Errorf("Shared parse %d: figures differ", pass)
				}
			}

			// The strict entry point agrees with Python on every complete
			// file and reports the others as torn.
			sspec, serr := Parse(data, c.types)
			if len(data) == 0 || data[len(data)-1] != '\n' {
				torn[c.id] = true
				var pe *ParseError
				if !errors.As(serr, &pe) || !pe.Torn || pe.Kind != "Torn" {
					t.Fatalf("strict Parse of an unterminated file: got %v, want a torn ParseError", serr)
				}
				if _, listed := tornCases[c.id]; !listed && os.Getenv("FGTOP_RESOURCE_CASES") == "" {
					t.Errorf("deliberate difference not listed in tornCases")
				}
				return
			}
			if (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error() {
				t.Fatalf("strict and lenient disagree: %v vs %v", serr, err)
			}
			if spec != nil && !bytes.Equal(spec.Format(), sspec.Format()) {
				t.Fatalf("strict and lenient specs differ")
			}
		})
		if ok {
			pass++
		}
	}
	if os.Getenv("FGTOP_RESOURCE_CASES") == "" {
		for id := range tornCases {
			if !torn[id] {
				t.Errorf("tornCases lists %s, which is not an unterminated case", id)
			}
		}
	}
	t.Logf("parity: %d/%d cases pass (%d of them torn under strict Parse, checked leniently)", pass, len(cases), len(torn))
}

func checkExpected(t *testing.T, spec *Spec, err error, exp ordered) {
	t.Helper()
	okv, _ := exp.get("ok")
	if okv != true {
		want, _ := exp.get("error")
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("got %v (spec %v), want a ParseError %s", err, spec != nil, want)
		}
		if pe.Kind != want {
			t.Fatalf("got %s (%v), want %s (%v)", pe.Kind, pe, want, func() any { m, _ := exp.get("error_message"); return m }())
		}
		return
	}
	if err != nil {
		t.Fatalf("got %v, want success", err)
	}

	wantSlots, _ := exp.get("slots")
	var gotSlots ordered
	for _, k := range spec.SlotOrder {
		gotSlots = append(gotSlots, orderedMember{string(k), spec.Slots[k].String()})
	}
	if len(gotSlots) != len(spec.Slots) {
		t.Errorf("SlotOrder has %d names, Slots %d", len(gotSlots), len(spec.Slots))
	}
	compare(t, "slots", canon(gotSlots), canon(wantSlots))

	wantAlloc, _ := exp.get("allocations")
	compare(t, "allocations", canon(allocTree(spec)), canon(wantAlloc))

	wantScratch, _ := exp.get("scratch_disk_size")
	compare(t, "scratch_disk_size", spec.ScratchSize.String(), wantScratch.(json.Number).String())

	wantMounts, _ := exp.get("mounts")
	var gotMounts []any
	for _, m := range spec.Mounts {
		gotMounts = append(gotMounts, ordered{{"type", m.Type}, {"source", m.Source}, {"target", m.Target}, {"permission", m.Permission}})
	}
	if gotMounts == nil {
		gotMounts = []any{}
	}
	compare(t, "mounts", canon(gotMounts), canon(wantMounts))

	wantUnified, _ := exp.get("unified_devices")
	compare(t, "unified_devices", canon(spec.UnifiedDevices), canon(wantUnified))

	if rw, ok := exp.get("rewritten"); ok {
		checkRewritten(t, spec, rw.(ordered))
	}
}

// checkRewritten compares FormatStrict of the spec, without the Extra and
// CID lines write_to_string does not produce, with the text Backend.AI's
// writer made of the same parse (or the exception it raised).
func checkRewritten(t *testing.T, spec *Spec, rw ordered) {
	t.Helper()
	bare := *spec
	bare.Extra, bare.CID = nil, ""
	got, err := bare.FormatStrict()
	if okv, _ := rw.get("ok"); okv == true {
		text, _ := rw.get("text")
		if err != nil {
			t.Errorf("rewritten: FormatStrict failed (%v); Python wrote %q", err, text)
			return
		}
		compare(t, "rewritten", string(got), text.(string))
		return
	}
	want, _ := rw.get("error")
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Kind != want {
		t.Errorf("rewritten: got %v (%q), want a %s", err, got, want)
	}
}

func compare(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		if len(got) > 600 {
			got = got[:600] + "..."
		}
		if len(want) > 600 {
			want = want[:600] + "..."
		}
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// allocTree renders the allocations as Python's nested dicts:
// {device: {slot: {device id: str(Decimal)}}}.
func allocTree(spec *Spec) ordered {
	var tree ordered
	if len(spec.DeviceOrder) != len(spec.AllocOrder) {
		tree = append(tree, orderedMember{"!order", fmt.Sprint(len(spec.DeviceOrder))})
	}
	for _, slot := range spec.AllocOrder {
		dev := string(slot.DeviceName())
		var ids ordered
		for _, id := range spec.DeviceOrder[slot] {
			ids = append(ids, orderedMember{string(id), spec.Alloc[slot][id].String()})
		}
		if len(ids) != len(spec.Alloc[slot]) {
			ids = append(ids, orderedMember{"!count", fmt.Sprint(len(spec.Alloc[slot]))})
		}
		i := 0
		for i < len(tree) && tree[i].key != dev {
			i++
		}
		if i == len(tree) {
			tree = append(tree, orderedMember{dev, ordered{}})
		}
		tree[i].val = append(tree[i].val.(ordered), orderedMember{string(slot), ids})
	}
	if len(spec.AllocOrder) != len(spec.Alloc) {
		tree = append(tree, orderedMember{"!slots", fmt.Sprint(len(spec.Alloc))})
	}
	return tree
}

// canon renders decoded JSON (ours or the corpus's) as one string with key
// order kept; numbers are typed: integers print as integers, floats as
// their shortest float64 form.
func canon(v any) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString(strconv.FormatBool(t))
		case string:
			b.WriteString(strconv.Quote(t))
		case int64:
			b.WriteString("int:" + strconv.FormatInt(t, 10))
		case uint64:
			b.WriteString("int:" + strconv.FormatUint(t, 10))
		case float64:
			b.WriteString("float:" + strconv.FormatFloat(t, 'g', -1, 64))
		case json.Number:
			s := t.String()
			if strings.ContainsAny(s, ".eE") {
				f, _ := strconv.ParseFloat(s, 64)
				b.WriteString("float:" + strconv.FormatFloat(f, 'g', -1, 64))
			} else {
				b.WriteString("int:" + s)
			}
		case []any:
			b.WriteByte('[')
			for i, x := range t {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(x)
			}
			b.WriteByte(']')
		case ordered:
			b.WriteByte('{')
			for i, m := range t {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Quote(m.key) + ":")
				walk(m.val)
			}
			b.WriteByte('}')
		case Object:
			b.WriteByte('{')
			for i, m := range t {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Quote(m.Key) + ":")
				walk(m.Value)
			}
			b.WriteByte('}')
		default:
			fmt.Fprintf(&b, "?%T", v)
		}
	}
	walk(v)
	return b.String()
}
