//go:build cgo && linux

package plugin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/internal/etcdtest"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// TestEtcdTextIsUntrusted: keys and values someone wrote to etcd reach
// the issues (a device_mask that masks nothing, agents whose settings
// differ) only through untrusted.Text: no escape sequence or bidi
// override gets to the operator's terminal, and the item is still named.
func TestEtcdTextIsUntrusted(t *testing.T) {
	etcd := etcdtest.Start(t)
	g := plugin.GlobalPrefix("local")
	etcd.Put(g+"device_mask", "\x1b]52;c;aGk=\x07,GPU-\u202eevil")
	etcd.Put(plugin.NodePrefix("local", "i-b")+"evil\x1b[2Jkey", "\x1b[31mred\u2066")
	inner, _ := nvmlSource(t, 2)
	src := plugin.NewSource(inner, plugin.Options{Etcd: plugin.EtcdOptions{Endpoints: []string{etcd.Endpoint},
		Agents: []model.AgentID{"i-a", "i-b"}, Timeout: time.Second}})
	src.Start(3 * time.Second)
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mask, differ bool
	for _, is := range inv.Issues {
		if !untrusted.Safe(is.Message) {
			t.Errorf("issue reaches the terminal raw: %q", is.Message)
		}
		mask = mask || strings.Contains(is.Message, `device_mask names \x1b]52;c;aGk=\x07`)
		differ = differ || strings.Contains(is.Message, `evil\x1b[2Jkey=\x1b[31mred\u2066`)
	}
	if !mask || !differ {
		t.Errorf("the issues do not name the stray mask item (%v) and the differing setting (%v), escaped: %+v", mask, differ, inv.Issues)
	}
	if p := inv.Plugin; p == nil || !untrusted.Safe(p.Detail) || !untrusted.Safe(p.Settings) {
		t.Errorf("plugin %+v", inv.Plugin)
	}
}
