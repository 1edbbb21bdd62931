package report

// indentCompact appends src, compact JSON as encoding/json writes it (no
// whitespace outside strings), to dst indented as json.Indent(dst, src,
// "", indent) would. json.Indent runs its validating scanner over every
// byte, half the cost of a 10,000-kernel document; input that comes from
// json.Marshal needs no validating.
func indentCompact(dst, src []byte, indent string) []byte {
	return indentCompactAt(dst, src, indent, 0)
}

// indentCompactAt is indentCompact for src nested depth levels deep in a
// document (a run of array elements, indented on their own).
func indentCompactAt(dst, src []byte, indent string, depth int) []byte {
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			// Copy the string whole: find its closing quote past escapes.
			j := i + 1
			for j < len(src) {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if src[j] == '"' {
					break
				}
				j++
			}
			if j >= len(src) {
				j = len(src) - 1
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				// An empty object or array stays on its line.
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
