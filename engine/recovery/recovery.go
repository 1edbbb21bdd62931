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
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// FileName is the record's name in a kernel's config directory.
const FileName = "recovery.json"

// MaxSize bounds what is parsed: real records are about 1 KiB.
const MaxSize = 1 << 20

// ErrEmpty is returned for an empty file: the agent writes the record in
// one call, so an empty one is being written (or was truncated).
var ErrEmpty = errors.New("empty file (still being written?)")

// ErrTruncated is returned for a document that ends before it is whole:
// being written, or cut short.
var ErrTruncated = errors.New("truncated JSON (still being written?)")

// BeingWritten reports whether err says the record is incomplete (empty
// or cut short), as while the agent rewrites it, rather than wrong.
func BeingWritten(err error) bool { return errors.Is(err, ErrEmpty) || errors.Is(err, ErrTruncated) }

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
	f, err := scanRecord(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case !f.hasID || f.id == "":
		return nil, fmt.Errorf("%s: no kernel id (\"id\")", path)
	case !f.hasAgent || f.agent == "":
		return nil, fmt.Errorf("%s: no owning agent (\"agent_id\")", path)
	}
	// Backend.AI's KernelOwnershipData turns these into uuid.UUID and
	// fails on anything else; pydantic writes them in canonical form.
	for _, id := range []struct{ name, v string }{{"id", f.id}, {"ownership_data.session_id", f.owner.session},
		{"ownership_data.owner_user_id", f.owner.user}, {"ownership_data.owner_project_id", f.owner.project}} {
		if id.v != "" && !untrusted.IsUUID(id.v) {
			return nil, fmt.Errorf("%s: %s \"%s\" is not a UUID", path, id.name, untrusted.Text(cut(id.v, 80)))
		}
	}
	// Every string the console shows enters through the one rule for
	// outside text.
	return &model.KernelRecord{Path: path, KernelID: model.KernelID(f.id), AgentID: model.AgentID(untrusted.Text(f.agent)),
		SessionType: untrusted.Text(f.sessionType), SessionID: f.owner.session, OwnerUserID: f.owner.user, OwnerProjectID: f.owner.project,
		Image:        untrusted.Text(canonical(f.image.registry, f.image.project, f.image.name, f.image.tag)),
		Architecture: untrusted.Text(f.image.arch)}, nil
}

// cut keeps at most n bytes of s, at a character boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// canonical spells an image reference as Backend.AI's ImageRef.canonical
// does: registry/project/name:tag, without the parts that are empty. It
// allocates once: the parts may be bytes of the file, which is not kept.
func canonical(registry, project, name, tag []byte) string {
	if len(name) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(len(registry) + len(project) + len(name) + len(tag) + 3)
	if len(registry) > 0 {
		b.Write(registry)
		b.WriteByte('/')
	}
	if len(project) > 0 {
		b.Write(project)
		b.WriteByte('/')
	}
	b.Write(name)
	if len(tag) > 0 {
		b.WriteByte(':')
		b.Write(tag)
	}
	return b.String()
}
