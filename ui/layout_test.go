package ui

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fgtop/fgtop/"

// TestScreensImportOneWay: ui's packages import one way, screens -> kit ->
// model: the kit knows no screen, a screen imports another only where it
// opens it (the console opens the editor, the fleet opens consoles, the SSH
// server and local run consoles on the screen package's drawing), and nothing under ui imports cmd. Each package's
// doc comment says what it owns.
func TestScreensImportOneWay(t *testing.T) {
	// The ui packages each may import; any other ui package is a wrong way.
	mayImport := map[string][]string{
		"kit":           nil,
		"render":        {"kit"},
		"editor":        {"kit", "render"},
		"console":       {"kit", "render", "editor"},
		"fleet":         {"kit", "render", "console"},
		"ssh":           {"kit", "console", "screen"},
		"local":         {"console", "screen"},
		"internal/fake": nil,
		// screen draws any Bubble Tea program; it knows none of them.
		"screen": nil,
	}
	// The kit draws: of the module it reads only the model (with its
	// subpackages, such as model/names), the themes and the roles
	// (agentconfig), never the engine's workings.
	kitMay := []string{"model", "themes", "engine/agentconfig"}
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." || strings.Contains(path, "testdata") {
			return err
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		var src []string
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				src = append(src, f)
			}
		}
		if len(src) == 0 {
			return nil
		}
		pkg := filepath.ToSlash(path)
		allowed, known := mayImport[pkg]
		if !known {
			t.Errorf("ui/%s: a package this test does not know: give it its place in mayImport", pkg)
			return nil
		}
		seen[pkg] = true
		documented := false
		fset := token.NewFileSet()
		for _, f := range src {
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if af.Doc != nil && strings.HasPrefix(af.Doc.Text(), "Package "+af.Name.Name+" ") {
				documented = true
			}
			for _, im := range af.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				rest, ours := strings.CutPrefix(p, module)
				switch {
				case !ours:
				case strings.HasPrefix(rest, "cmd/"):
					t.Errorf("%s imports %s: nothing under ui imports cmd", f, p)
				case strings.HasPrefix(rest, "ui/"):
					if to := strings.TrimPrefix(rest, "ui/"); !slices.Contains(allowed, to) {
						t.Errorf("%s imports ui/%s: ui/%s may import only %v", f, to, pkg, allowed)
					}
				case pkg == "kit" && !slices.Contains(kitMay, rest) && !strings.HasPrefix(rest, "model/") && !strings.HasPrefix(rest, "internal/"):
					t.Errorf("%s imports %s: the kit reads only %v of the module", f, p, kitMay)
				}
			}
		}
		if !documented {
			t.Errorf("ui/%s: no package doc comment (\"Package ... \") saying what it owns", pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range mayImport {
		if !seen[pkg] {
			t.Errorf("ui/%s: not found", pkg)
		}
	}
}
