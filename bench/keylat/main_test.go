package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// feedAll feeds the chunks in order and returns every frame, the answers
// written back, and every chunk's text joined.
func feedAll(sync bool, chunks ...string) (frames []string, answers, text string) {
	var ans strings.Builder
	ps := &parser{sync: sync, answer: func(b []byte) { ans.Write(b) }}
	var all strings.Builder
	for _, c := range chunks {
		frames = append(frames, ps.feed([]byte(c))...)
		all.WriteString(ps.chunk.String())
	}
	return frames, ans.String(), all.String()
}

func TestParser(t *testing.T) {
	tests := []struct {
		name    string
		sync    bool
		chunks  []string
		frames  []string
		answers string
		text    string
	}{
		{
			name:    "queries answered when sync",
			sync:    true,
			chunks:  []string{"\x1b[?2026$p\x1b[?2027$p\x1b]11;?\x07\x1b[c"},
			answers: "\x1b[?2026;2$y\x1b[?2027;0$y\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?62;22c",
		},
		{
			name:   "no answers without sync",
			chunks: []string{"\x1b[?2026$p\x1b]11;?\x07"},
		},
		{
			name:   "a frame split across reads, colours kept inside a word",
			sync:   true,
			chunks: []string{"\x1b[?2026hHELD/\x1b[38;5;2", "45mCAPA", "CITY\x1b[?2026", "l"},
			frames: []string{"HELD/CAPACITY"},
			text:   "HELD/CAPACITY",
		},
		{
			name:   "a cursor move splits words",
			sync:   true,
			chunks: []string{"\x1b[?2026hshift\x1b[3;4H+tab\x1b[?2026l\x1b[?2026hx\x1b[?2026l"},
			frames: []string{"shift\n+tab", "x"},
			text:   "shift\n+tabx",
		},
		{
			name:   "strings ended by ST are skipped",
			sync:   true,
			chunks: []string{"\x1b]2;title\x1b\\a\x1bP+q\x1b\\b\r\n"},
			text:   "ab\n\n", // \r and \n each end a run of text
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames, answers, text := feedAll(tt.sync, tt.chunks...)
			if strings.Join(frames, "|") != strings.Join(tt.frames, "|") {
				t.Errorf("frames %q, want %q", frames, tt.frames)
			}
			if answers != tt.answers {
				t.Errorf("answers %q, want %q", answers, tt.answers)
			}
			if text != tt.text {
				t.Errorf("text %q, want %q", text, tt.text)
			}
		})
	}
}

// FuzzParser: any output, cut anywhere, gives the same frames as in one
// piece, and never a frame longer than the input.
func FuzzParser(f *testing.F) {
	f.Add([]byte("\x1b[?2026hHELD/CAPACITY\x1b[?2026l"), 7)
	f.Add([]byte("\x1b[?2026$p\x1b]11;?\x07\x1b[?2026ha\x1b[1;2Hb\x1b[?2026l"), 3)
	f.Fuzz(func(t *testing.T, out []byte, cut int) {
		if len(out) > 1<<16 {
			t.Skip()
		}
		whole, _, _ := feedAll(true, string(out))
		if cut < 0 {
			cut = -cut
		}
		cut %= len(out) + 1
		parts, _, _ := feedAll(true, string(out[:cut]), string(out[cut:]))
		if strings.Join(whole, "\x00") != strings.Join(parts, "\x00") {
			t.Fatalf("frames differ when cut at %d: %q vs %q", cut, whole, parts)
		}
		for _, fr := range whole {
			if len(fr) > len(out) {
				t.Fatalf("a frame of %d bytes from %d", len(fr), len(out))
			}
		}
	})
}

// TestFloorAgainstItself: keylat measures its own echo program as the
// console, with the floor beside it, and reports both.
func TestFloorAgainstItself(t *testing.T) {
	if testing.Short() {
		t.Skip("builds keylat")
	}
	bin := filepath.Join(t.TempDir(), "keylat")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-rounds", "6", "-gap-min", "1ms", "-gap-max", "5ms", "-settle", "10ms", "--", bin, "-echo-child").CombinedOutput()
	if err != nil {
		t.Fatalf("keylat: %v\n%s", err, out)
	}
	for _, want := range []string{"key to its frame's end, all                  n=6 ", "the floor in the same run: key to its frame  n=6 "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
