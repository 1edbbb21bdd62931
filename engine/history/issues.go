package history

import (
	"errors"
	"fmt"

	"github.com/fgtop/fgtop/model"
)

// recIssuesPatch (format version 3) is the issue list as a change of the
// one before: a node whose devices are over capacity, or whose kernels hold
// devices the inventory lacks, has issues whose messages carry the amounts,
// so most changes rewrite a dozen messages by a few digits each. Writing
// the whole list every time was most of what such a change recorded (2.7 KB
// of 3 in the engine's benchmark), and every byte costs compression time.
//
// Body: the new list's length (uvarint), then, in increasing order of
// index, each entry that differs from the old list's: its index (uvarint)
// and either 0 and the whole issue, or 1 and the old issue's message edited
// (the old entry otherwise the same): bytes kept from the front (uvarint),
// bytes kept from the back (uvarint), the bytes between (string). Entries
// not listed are the old list's.
const recIssuesPatch byte = 'i'

const (
	issueWhole = 0
	issueEdit  = 1
)

// encodeIssuesPatch appends the patch that turns old into is.
func encodeIssuesPatch(e *enc, old, is []model.Issue) {
	e.uvarint(uint64(len(is)))
	for i := range is {
		n := &is[i]
		if i >= len(old) {
			e.uvarint(uint64(i))
			e.byte(issueWhole)
			encodeIssue(e, n)
			continue
		}
		o := &old[i]
		// All but the message first: the message is the long field, and
		// the one that usually moves.
		rest := o.Severity == n.Severity && o.Code == n.Code && o.File == n.File && o.Line == n.Line &&
			o.Device == n.Device && o.Kernel == n.Kernel && o.Agent == n.Agent
		if rest && o.Message == n.Message {
			continue
		}
		e.uvarint(uint64(i))
		if !rest {
			e.byte(issueWhole)
			encodeIssue(e, n)
			continue
		}
		a, b := o.Message, n.Message
		p := commonPrefix(a, b)
		s := commonSuffix(a[p:], b[p:])
		e.byte(issueEdit)
		e.uvarint(uint64(p))
		e.uvarint(uint64(s))
		e.str(b[p : len(b)-s])
	}
}

var errIssuesPatch = errors.New("an issue patch that does not fit the list before it")

// decodeIssuesPatch applies a patch to old and returns the new list (a
// new slice: old may be a snapshot's).
func decodeIssuesPatch(d *dec, old []model.Issue) []model.Issue {
	n := d.count()
	if d.err != nil {
		return nil
	}
	var out []model.Issue
	if n > 0 {
		out = make([]model.Issue, n)
		copy(out, old)
	}
	next := 0
	for len(d.b) > 0 && d.err == nil {
		i := d.uvarint()
		if d.err != nil {
			break
		}
		if i < uint64(next) || i >= uint64(n) {
			d.fail(fmt.Errorf("%w: entry %d of %d after %d", errIssuesPatch, i, n, next))
			break
		}
		for ; next < int(i); next++ {
			if next >= len(old) {
				d.fail(fmt.Errorf("%w: entry %d kept, the list before had %d", errIssuesPatch, next, len(old)))
				return nil
			}
		}
		switch d.byte() {
		case issueWhole:
			out[i] = decodeIssue(d)
		case issueEdit:
			if i >= uint64(len(old)) {
				d.fail(fmt.Errorf("%w: entry %d edited, the list before had %d", errIssuesPatch, i, len(old)))
				return nil
			}
			p, s := d.uvarint(), d.uvarint()
			mid := d.str()
			msg := old[i].Message
			if d.err == nil && (p > uint64(len(msg)) || s > uint64(len(msg))-p) {
				d.fail(fmt.Errorf("%w: keeps %d and %d bytes of a %d-byte message", errIssuesPatch, p, s, len(msg)))
			}
			if d.err != nil {
				return nil
			}
			out[i].Message = msg[:p] + mid + msg[len(msg)-int(s):]
		default:
			if d.err == nil {
				d.fail(fmt.Errorf("%w: entry %d of an unknown kind", errIssuesPatch, i))
			}
		}
		next = int(i) + 1
	}
	if d.err == nil && n > len(old) && next < n {
		d.fail(fmt.Errorf("%w: %d entries, %d of them new, not all given", errIssuesPatch, n, n-len(old)))
	}
	if d.err != nil {
		return nil
	}
	return out
}

// commonPrefix is the length of the bytes a and b begin with alike; eight
// at a time first (the messages share most of their length).
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	p := 0
	for p+8 <= n && a[p:p+8] == b[p:p+8] {
		p += 8
	}
	for p < n && a[p] == b[p] {
		p++
	}
	return p
}

// commonSuffix is the length of the bytes a and b end with alike.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	s := 0
	for s+8 <= n && a[len(a)-s-8:len(a)-s] == b[len(b)-s-8:len(b)-s] {
		s += 8
	}
	for s < n && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return s
}
