package alloc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// The parity corpus: scenarios run through Backend.AI's own allocator code
// (schema in testdata/fixtures/README.md).

type fixtureCase struct {
	ID             string          `json:"id"`
	MapClass       string          `json:"map_class"`
	DeviceName     string          `json:"device_name"`
	SlotName       string          `json:"slot_name"`
	SlotType       string          `json:"slot_type"`
	Strategy       string          `json:"strategy"`
	QuantumSize    *string         `json:"quantum_size"`
	AffinityPolicy string          `json:"affinity_policy"`
	AllowFrag      *bool           `json:"allow_resource_fragmentation"`
	Devices        []fixtureDevice `json:"devices"`
	Operations     []fixtureOp     `json:"operations"`
	Observations   []string        `json:"observations"`
}

type fixtureDevice struct {
	ID       string `json:"id"`
	SlotName string `json:"slot_name"`
	Capacity string `json:"capacity"`
	NUMANode *int   `json:"numa_node"`
}

type fixtureOp struct {
	Op       string          `json:"op"`
	Kernel   string          `json:"kernel"`
	Request  ordered         `json:"request"`
	Expected fixtureExpected `json:"expected"`
}

type fixtureExpected struct {
	OK           bool    `json:"ok"`
	Allocation   ordered `json:"allocation"`
	StateAfter   ordered `json:"state_after"`
	Error        string  `json:"error"`
	ErrorMessage string  `json:"error_message"`
}

// ordered is a JSON object with its key order kept; values are strings or
// nested ordered objects.
type ordered struct {
	keys []string
	vals []any // string or ordered
}

func (o *ordered) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	v, err := decodeOrdered(dec)
	if err != nil {
		return err
	}
	ov, ok := v.(ordered)
	if !ok {
		return fmt.Errorf("want a JSON object, got %T", v)
	}
	*o = ov
	return nil
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t != '{' {
			return nil, fmt.Errorf("unexpected %v", t)
		}
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
			o.keys = append(o.keys, kt.(string))
			o.vals = append(o.vals, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return o, nil
	case string:
		return t, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// toStrings flattens {slot: {dev: "amount"}} as an Allocation of strings.
func (o ordered) toStrings() [][3]string {
	var out [][3]string
	for i, k := range o.keys {
		inner, _ := o.vals[i].(ordered)
		if len(inner.keys) == 0 {
			out = append(out, [3]string{k, "", ""})
		}
		for j, dk := range inner.keys {
			out = append(out, [3]string{k, dk, inner.vals[j].(string)})
		}
	}
	return out
}

func allocStrings(a Allocation) [][3]string {
	var out [][3]string
	for _, s := range a {
		if len(s.Shares) == 0 {
			out = append(out, [3]string{string(s.Slot), "", ""})
		}
		for _, sh := range s.Shares {
			out = append(out, [3]string{string(s.Slot), string(sh.Device), sh.Amount.String()})
		}
	}
	return out
}

// sameEntries compares ignoring order; sameOrder also requires the order.
func sameEntries(a, b [][3]string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[[3]string]int{}
	for _, e := range a {
		seen[e]++
	}
	for _, e := range b {
		seen[e]--
		if seen[e] < 0 {
			return false
		}
	}
	return true
}

func sameOrder(a, b [][3]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func loadCases(t testing.TB) []fixtureCase {
	t.Helper()
	b, err := os.ReadFile(testfix.Dir(t, "alloc-cases.json"))
	if err != nil {
		t.Fatalf("reading the parity corpus: %v", err)
	}
	var cases []fixtureCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("parsing alloc-cases.json: %v", err)
	}
	return cases
}

// buildCase makes the alloc map a case describes.
func buildCase(t testing.TB, c fixtureCase) Map {
	t.Helper()
	devs := make([]DeviceSlot, len(c.Devices))
	for i, d := range c.Devices {
		devs[i] = DeviceSlot{
			ID: model.DeviceID(d.ID), Slot: model.SlotName(d.SlotName),
			SlotType: model.SlotType(c.SlotType), Capacity: model.MustDec(d.Capacity), NUMANode: d.NUMANode,
		}
	}
	strategy, err := ParseStrategy(c.Strategy)
	if err != nil {
		t.Fatal(err)
	}
	switch c.MapClass {
	case "FractionAllocMap":
		return NewFractionMap(devs, strategy, model.MustDec(*c.QuantumSize), nil)
	case "DiscretePropertyAllocMap":
		return NewDiscreteMap(devs, strategy, nil)
	}
	t.Fatalf("%s: unknown map class %q", c.ID, c.MapClass)
	return nil
}

// TestParity replays every operation of every case through Allocate (the
// resources.allocate equivalent) and Free, and compares allocation values,
// the whole cumulative map and error kinds exactly.
func TestParity(t *testing.T) {
	cases := loadCases(t)
	var ops, passed, orderMismatch, msgMismatch int
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			m := buildCase(t, c)
			policy, err := ParseAffinityPolicy(c.AffinityPolicy)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{ForbidFragmentation: c.AllowFrag != nil && !*c.AllowFrag}
			dev := model.DeviceName(c.DeviceName)
			computers := map[model.DeviceName]Map{dev: m}
			order := []model.DeviceName{dev}
			kernels := map[string]KernelAllocation{}
			for i, op := range c.Operations {
				ops++
				ok := true
				fail := func(format string, args ...any) {
					ok = false
					t.Errorf("op #%d (%s %s): "+format, append([]any{i, op.Op, op.Kernel}, args...)...)
				}
				switch op.Op {
				case "allocate":
					var req Request
					for j, k := range op.Request.keys {
						req = append(req, SlotAmount{model.SlotName(k), model.MustDec(op.Request.vals[j].(string))})
					}
					got, err := Allocate(computers, req, order, policy, opts)
					switch {
					case op.Expected.OK && err != nil:
						fail("unexpected error %v", err)
					case !op.Expected.OK && err == nil:
						fail("got %v, want error %s", got, op.Expected.Error)
					case !op.Expected.OK:
						var ae *Error
						if !errors.As(err, &ae) {
							fail("error %v is not an *alloc.Error", err)
						} else {
							if ae.Kind() != op.Expected.Error {
								fail("error kind %s, want %s (%v)", ae.Kind(), op.Expected.Error, err)
							}
							if ae.Msg != op.Expected.ErrorMessage {
								msgMismatch++
								t.Logf("op #%d message differs (informational):\n got %s\nwant %s", i, ae.Msg, op.Expected.ErrorMessage)
							}
						}
					default:
						kernels[op.Kernel] = got
						a, _ := got.Get(dev)
						want := op.Expected.Allocation.toStrings()
						have := allocStrings(a)
						if !sameEntries(have, want) {
							fail("allocation %v, want %v", have, want)
						} else if !sameOrder(have, want) {
							orderMismatch++
							t.Logf("op #%d allocation order differs: %v vs %v", i, have, want)
						}
					}
				case "free":
					k, found := kernels[op.Kernel]
					if !found {
						t.Fatalf("op #%d frees unknown kernel %s", i, op.Kernel)
					}
					if err := Free(computers, k); err != nil {
						fail("free: %v", err)
					}
					delete(kernels, op.Kernel)
				default:
					t.Fatalf("op #%d: unknown op %q", i, op.Op)
				}
				want := op.Expected.StateAfter.toStrings()
				have := allocStrings(m.Allocations())
				if !sameOrder(have, want) {
					fail("state_after %v, want %v", have, want)
				}
				if ok {
					passed++
				}
			}
		})
	}
	t.Logf("parity: %d/%d operations pass (%d cases); %d allocations in a different key order, %d error messages differ",
		passed, ops, len(cases), orderMismatch, msgMismatch)
	if passed != ops {
		t.Errorf("parity: %d of %d operations fail", ops-passed, ops)
	}
}
