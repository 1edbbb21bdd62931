// Package jsonout writes a command's --json output: one indented
// document and a newline.
package jsonout

import (
	"encoding/json"
	"fmt"
	"io"
)

// Write writes v as indented JSON and a newline. A value that does not
// marshal is written as {"error": "..."}, still one JSON document: a
// script reading the output gets JSON either way.
func Write(w io.Writer, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(w, "{\"error\": %q}\n", err.Error())
		return
	}
	w.Write(append(b, '\n'))
}
