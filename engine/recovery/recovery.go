// Package recovery reads Backend.AI's per-kernel recovery.json
// (KernelRecoveryScratchData, domain/backendai.md §1.7): the record in
// <scratch-root>/<kernel-id>/config/recovery.json that names the agent
// owning the kernel, its session and owners, and its image.
//
// The file is outside input: it is parsed strictly enough that a record
// Backend.AI itself would reject (not an object, a missing or mistyped id
// or agent_id) is an error, and leniently about everything fgtop does not
// use, so a newer agent's extra fields never break attribution.
package recovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/fgtop/fgtop/model"
)

// FileName is the record's name in a kernel's config directory.
const FileName = "recovery.json"

// MaxSize bounds what is parsed: real records are about 1 KiB.
const MaxSize = 1 << 20

// ErrEmpty is returned for an empty file: the agent writes the record in
// one call, so an empty one is being written (or was truncated).
var ErrEmpty = errors.New("empty file (still being written?)")

// raw mirrors the fields fgtop keeps. Pointers and json.RawMessage tell a
// null or a missing field from a present one.
type raw struct {
	ID       *string `json:"id"`
	AgentID  *string `json:"agent_id"`
	ImageRef *struct {
		Name         *string `json:"name"`
		Project      *string `json:"project"`
		Tag          *string `json:"tag"`
		Registry     *string `json:"registry"`
		Architecture *string `json:"architecture"`
	} `json:"image_ref"`
	Ownership *struct {
		SessionID      *string `json:"session_id"`
		OwnerUserID    *string `json:"owner_user_id"`
		OwnerProjectID *string `json:"owner_project_id"`
	} `json:"ownership_data"`
	SessionType *string `json:"session_type"`
}

// Parse reads one recovery.json. path is kept in the record and used in
// errors.
func Parse(path string, data []byte) (*model.KernelRecord, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: %d bytes, more than a recovery record can be", path, len(data))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrEmpty)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not UTF-8", path)
	}
	if err := ensureObject(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var r raw
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, describe(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: extra data after the JSON object", path)
	}
	switch {
	case r.ID == nil || *r.ID == "":
		return nil, fmt.Errorf("%s: no kernel id (\"id\")", path)
	case r.AgentID == nil || *r.AgentID == "":
		return nil, fmt.Errorf("%s: no owning agent (\"agent_id\")", path)
	}
	rec := &model.KernelRecord{Path: path, KernelID: model.KernelID(*r.ID), AgentID: model.AgentID(*r.AgentID),
		SessionType: deref(r.SessionType)}
	if o := r.Ownership; o != nil {
		rec.SessionID, rec.OwnerUserID, rec.OwnerProjectID = deref(o.SessionID), deref(o.OwnerUserID), deref(o.OwnerProjectID)
	}
	if im := r.ImageRef; im != nil {
		rec.Image = canonical(deref(im.Registry), deref(im.Project), deref(im.Name), deref(im.Tag))
		rec.Architecture = deref(im.Architecture)
	}
	return rec, nil
}

// canonical spells an image reference as Backend.AI's ImageRef.canonical
// does: registry/project/name:tag, without the parts that are empty.
func canonical(registry, project, name, tag string) string {
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

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ensureObject rejects a top-level value that is not an object (json
// decodes null into a struct without complaint).
func ensureObject(data []byte) error {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	return nil
}

// describe turns a decoding error into words an operator can act on.
func describe(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %q is a JSON %s, want %s", te.Field, te.Value, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("truncated JSON (still being written?)")
	}
	return err
}
