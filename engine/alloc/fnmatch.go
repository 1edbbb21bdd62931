package alloc

// fnmatchCase is Python's fnmatch.fnmatchcase(name, pat): shell-style
// wildcards without case folding or any special treatment of '/' (which is
// where Go's path.Match differs). '*' matches any run, '?' any one
// character, "[seq]" / "[!seq]" a character in or not in seq, where a ']'
// right after the opening (or after '!') is literal and "a-z" is a range;
// a '[' without a closing ']' is literal. A reversed range such as "z-a"
// matches nothing, as in Python 3.11+.
func fnmatchCase(name, pat string) bool {
	n, p := []rune(name), []rune(pat)
	return matchRunes(n, p)
}

func matchRunes(n, p []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(n); i++ {
				if matchRunes(n[i:], p) {
					return true
				}
			}
			return false
		case '?':
			if len(n) == 0 {
				return false
			}
			n, p = n[1:], p[1:]
		case '[':
			end := classEnd(p)
			if end < 0 {
				// No closing bracket: Python escapes the '[' literally.
				if len(n) == 0 || n[0] != '[' {
					return false
				}
				n, p = n[1:], p[1:]
				continue
			}
			if len(n) == 0 || !classMatches(p[1:end], n[0]) {
				return false
			}
			n, p = n[1:], p[end+1:]
		default:
			if len(n) == 0 || n[0] != p[0] {
				return false
			}
			n, p = n[1:], p[1:]
		}
	}
	return len(n) == 0
}

// classEnd returns the index of the ']' closing the class that starts at
// p[0] == '[', or -1.
func classEnd(p []rune) int {
	j := 1
	if j < len(p) && p[j] == '!' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for j < len(p) && p[j] != ']' {
		j++
	}
	if j >= len(p) {
		return -1
	}
	return j
}

// classMatches tests r against the body of a bracket class (without the
// brackets).
func classMatches(body []rune, r rune) bool {
	negate := false
	if len(body) > 0 && body[0] == '!' {
		negate = true
		body = body[1:]
	}
	in := false
	for i := 0; i < len(body); i++ {
		lo := body[i]
		if i+2 < len(body) && body[i+1] == '-' {
			hi := body[i+2]
			if lo <= r && r <= hi {
				in = true
			}
			i += 2
			continue
		}
		if lo == r {
			in = true
		}
	}
	return in != negate
}
