//go:build !(cgo && linux)

package inventory

import (
	"errors"
	"strings"
	"testing"
)

func TestStubNVML(t *testing.T) {
	if _, err := Open("nvml", OpenOptions{}); !errors.Is(err, ErrNoNVML) || !strings.Contains(err.Error(), "built without NVML support") {
		t.Errorf("Open(nvml) = %v, want ErrNoNVML", err)
	}
	src, err := Open("auto", OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inv := poll(t, src)
	if inv.Source.Kind != KindNone || len(inv.Issues) != 1 || !strings.Contains(inv.Issues[0].Message, "built without NVML support") {
		t.Errorf("auto without NVML: %+v %v", inv.Source, inv.Issues)
	}
}
