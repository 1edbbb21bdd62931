package recovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/internal/untrusted"
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
		{"torn", `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"x"`, "truncated"},
		{"no agent", `{"id":"a"}`, "agent_id"},
		{"null agent", `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":null}`, "agent_id"},
		{"empty agent", `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":""}`, "agent_id"},
		{"no id", `{"agent_id":"x"}`, "kernel id"},
		{"agent number", `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":3}`, `"agent_id" is not a string`},
		{"owner wrong type", `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"x","ownership_data":{"owner_user_id":1}}`, "owner_user_id"},
		{"trailing", `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"x"} {}`, "extra data"},
		{"not utf8", "{\"id\":\"\xff\",\"agent_id\":\"x\"}", "not UTF-8"},
		{"syntax", `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6",,}`, "not valid JSON"},
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

// TestParseHostile: escape sequences in the fields the console shows enter
// escaped; an owner id that is not a UUID makes the record unusable, and
// the error shows it escaped.
func TestParseHostile(t *testing.T) {
	in := `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"i-a\u001b[31m","session_type":"batch\r\n",` +
		`"image_ref":{"name":"\u001b]8;;http://x/\u001b\\img\u001b]8;;\u001b\\","architecture":"x86\u009b2J\u202e"}}`
	r, err := Parse("p", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(r.AgentID), r.SessionType, r.Image, r.Architecture} {
		if !untrusted.Safe(s) {
			t.Errorf("%q entered raw", s)
		}
	}
	if r.Architecture != `x86\u009b2J\u202e` || r.AgentID != `i-a\x1b[31m` {
		t.Errorf("escaped as %q, %q", r.Architecture, r.AgentID)
	}
	bad := `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"a","ownership_data":{"owner_user_id":"u\u001b]52;c;eA==\u0007"}}`
	_, err = Parse("p", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), `owner_user_id "u\x1b]52;c;eA==\x07" is not a UUID`) {
		t.Fatalf("err = %v", err)
	}
}

func TestParseLenient(t *testing.T) {
	// Fields fgtop does not use may be anything; unknown fields are ignored;
	// a null image or ownership leaves them empty.
	in := `{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"a","image_ref":null,"ownership_data":null,"service_ports":"whatever","new_field":{"x":1}}`
	r, err := Parse("p", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.AgentID != "a" || r.Image != "" || r.OwnerUserID != "" {
		t.Errorf("got %+v", r)
	}
}

// reference parses a record the slow, obvious way (encoding/json, keys
// matched exactly, last duplicate wins): what Parse's scanner must agree
// with.
func reference(data []byte) (*model.KernelRecord, bool) {
	if len(bytes.TrimSpace(data)) == 0 || !utf8.Valid(data) || len(data) > MaxSize {
		return nil, false
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return nil, false
	}
	str := func(m map[string]json.RawMessage, k string) (string, bool, bool) {
		raw, ok := m[k]
		if !ok || string(raw) == "null" {
			return "", false, true
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, false
		}
		return v, true, true
	}
	obj := func(k string, keys ...string) (map[string]string, bool) {
		out := map[string]string{}
		raw, ok := top[k]
		if !ok || string(raw) == "null" {
			return out, true
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, false
		}
		for _, key := range keys {
			v, _, ok := str(m, key)
			if !ok {
				return nil, false
			}
			out[key] = v
		}
		return out, true
	}
	id, hasID, ok1 := str(top, "id")
	agent, hasAgent, ok2 := str(top, "agent_id")
	st, _, ok3 := str(top, "session_type")
	im, ok4 := obj("image_ref", "name", "project", "tag", "registry", "architecture")
	ow, ok5 := obj("ownership_data", "session_id", "owner_user_id", "owner_project_id")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !hasID || id == "" || !hasAgent || agent == "" {
		return nil, false
	}
	for _, u := range []string{id, ow["session_id"], ow["owner_user_id"], ow["owner_project_id"]} {
		if u != "" && !uuidRe.MatchString(u) {
			return nil, false
		}
	}
	return &model.KernelRecord{Path: "p", KernelID: model.KernelID(id), AgentID: model.AgentID(untrusted.Text(agent)), SessionType: untrusted.Text(st),
		SessionID: ow["session_id"], OwnerUserID: ow["owner_user_id"], OwnerProjectID: ow["owner_project_id"],
		Image: untrusted.Text(canonicalRef(im["registry"], im["project"], im["name"], im["tag"])), Architecture: untrusted.Text(im["architecture"])}, true
}

// uuidRe is a canonical UUID as Python's str(uuid.UUID) writes it.
var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// canonicalRef is ImageRef.canonical spelt plainly with strings, the
// reference for canonical (which builds it from bytes of the file).
func canonicalRef(registry, project, name, tag string) string {
	if name == "" {
		return ""
	}
	s := name
	if project != "" {
		s = project + "/" + s
	}
	if registry != "" {
		s = registry + "/" + s
	}
	if tag != "" {
		s += ":" + tag
	}
	return s
}

func TestParseAgreesWithReference(t *testing.T) {
	cases := []string{
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b"}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","id":"c"}`,
		`{"id":"a\u00e9\n","agent_id":"b\/"}`,
		`{"ID":"a","agent_id":"b"}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","image_ref":{"name":"n","name":"m","x":[1,{"y":null}]}}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","image_ref":[]}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","ownership_data":{"owner_user_id":true}}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","n":-0.5e+10,"m":01}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","n":1.}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","s":"\x"}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","s":"` + "\t" + `"}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b",}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b"} `,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b"}x`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","t":tru}`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","t":nul`,
		`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b","d":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	}
	for _, c := range cases {
		checkAgainstReference(t, []byte(c))
	}
}

func checkAgainstReference(t *testing.T, data []byte) {
	t.Helper()
	want, ok := reference(data)
	got, err := Parse("p", data)
	if ok != (err == nil) {
		t.Fatalf("%.200q: Parse error %v, reference accepts: %v", data, err, ok)
	}
	if ok && *got != *want {
		t.Fatalf("%.200q: Parse %+v, reference %+v", data, got, want)
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
	f.Add([]byte(`{"id":"21e330bf-e15a-47a9-9183-df27ccd257b6","agent_id":"b"}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"id":"a\u0041","agent_id":"b","image_ref":{"name":"x"},"z":[1,-2.5e3,true,null,{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("p", data)
		if err == nil && (r == nil || r.AgentID == "" || r.KernelID == "") {
			t.Fatalf("accepted a record without agent or id: %+v", r)
		}
		if err != nil && r != nil {
			t.Fatal("a record and an error")
		}
		checkAgainstReference(t, data)
	})
}

// BenchmarkParse is one real record (~1 KB): a full scan parses one per
// kernel.
func BenchmarkParse(b *testing.B) {
	p := testfix.Dir(b, "backendai")
	data, err := os.ReadFile(filepath.Join(p, "recovery.numa1-system-no-owner.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse("p", data); err != nil {
			b.Fatal(err)
		}
	}
}
