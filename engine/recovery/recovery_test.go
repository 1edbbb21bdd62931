package recovery

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

func TestParseFixtures(t *testing.T) {
	dir := testfix.Dir(t, "backendai")
	cases := []struct {
		file                       string
		agent                      model.AgentID
		sessionType, image, arch   string
		owner, project, sessionPfx string
	}{
		{"recovery.numa0-batch.json", "i-gpu-node01-numa0", "batch", "cr.backend.ai/stable/python-pytorch:2.3-py311-cuda12.1", "x86_64",
			"35e02027-c5ba-4d6c-9708-7623f41044c1", "aa1a583c-9b59-4a24-a0b6-97320ab276ed", "0b59124e"},
		{"recovery.numa1-system-no-owner.json", "i-gpu-node01-numa1", "system", "cr.backend.ai/multiarch/python:3.12-ubuntu24.04", "aarch64",
			"", "", "cdc63c0c"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p := filepath.Join(dir, c.file)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(p, data)
			if err != nil {
				t.Fatal(err)
			}
			if r.AgentID != c.agent || r.SessionType != c.sessionType || r.Image != c.image || r.Architecture != c.arch ||
				r.OwnerUserID != c.owner || r.OwnerProjectID != c.project || !strings.HasPrefix(r.SessionID, c.sessionPfx) || r.Path != p {
				t.Errorf("got %+v", r)
			}
		})
	}
	// Every sample parses and names one of the fixture config's agents.
	all, _ := filepath.Glob(filepath.Join(dir, "recovery.*.json"))
	if len(all) < 6 {
		t.Fatalf("found %d samples, want 6", len(all))
	}
	for _, p := range all {
		data, _ := os.ReadFile(p)
		r, err := Parse(p, data)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !strings.HasPrefix(string(r.AgentID), "i-gpu-node01-numa") || r.KernelID == "" {
			t.Errorf("%s: %+v", p, r)
		}
	}
}

func TestParseRejects(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", "empty file"},
		{"spaces", "  \n", "empty file"},
		{"null", "null", "not a JSON object"},
		{"list", "[1]", "not a JSON object"},
		{"torn", `{"id":"a","agent_id":"x"`, "truncated"},
		{"no agent", `{"id":"a"}`, "agent_id"},
		{"null agent", `{"id":"a","agent_id":null}`, "agent_id"},
		{"empty agent", `{"id":"a","agent_id":""}`, "agent_id"},
		{"no id", `{"agent_id":"x"}`, "kernel id"},
		{"agent number", `{"id":"a","agent_id":3}`, `"agent_id" is a JSON number`},
		{"owner wrong type", `{"id":"a","agent_id":"x","ownership_data":{"owner_user_id":1}}`, "owner_user_id"},
		{"trailing", `{"id":"a","agent_id":"x"} {}`, "extra data"},
		{"not utf8", "{\"id\":\"\xff\",\"agent_id\":\"x\"}", "not UTF-8"},
		{"syntax", `{"id":"a",,}`, "not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("/r/recovery.json", []byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/r/recovery.json") {
				t.Fatalf("err = %v, want it to mention %q and the path", err, c.want)
			}
		})
	}
	if _, err := Parse("p", []byte("")); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v is not ErrEmpty", err)
	}
}

func TestParseLenient(t *testing.T) {
	// Fields fgtop does not use may be anything; unknown fields are ignored;
	// a null image or ownership leaves them empty.
	in := `{"id":"k","agent_id":"a","image_ref":null,"ownership_data":null,"service_ports":"whatever","new_field":{"x":1}}`
	r, err := Parse("p", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.AgentID != "a" || r.Image != "" || r.OwnerUserID != "" {
		t.Errorf("got %+v", r)
	}
}

func FuzzParse(f *testing.F) {
	dir, err := testfix.Path("backendai")
	if err == nil {
		all, _ := filepath.Glob(filepath.Join(dir, "recovery.*.json"))
		for _, p := range all {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"id":"a","agent_id":"b"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("p", data)
		if err == nil && (r == nil || r.AgentID == "" || r.KernelID == "") {
			t.Fatalf("accepted a record without agent or id: %+v", r)
		}
		if err != nil && r != nil {
			t.Fatal("a record and an error")
		}
	})
}
