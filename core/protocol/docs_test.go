package protocol

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository root, from core/protocol.
const root = "../.."

// walkText calls f for every tracked-looking text file of the repository: Go, Markdown,
// HCL, Python and shell, outside build outputs, caches and environments.
func walkText(t *testing.T, f func(path, text string)) {
	t.Helper()
	skip := map[string]bool{".git": true, ".cache": true, ".venv": true, "bin": true, "build": true, "runs": true, "node_modules": true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[d.Name()] || strings.HasPrefix(d.Name(), ".venv") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".hcl", ".py", ".sh", ".mk", ".tmpl":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f(path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every "docs/protocol.md section N" (or N.M) cited anywhere names a section that exists.
func TestProtocolCitationsExist(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	heads := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,3} (\d+(?:\.\d+)?)\.? `).FindAllStringSubmatch(string(doc), -1) {
		heads[m[1]] = true
	}
	if !heads["3.5"] || !heads["6.3"] || !heads["10"] {
		t.Fatalf("docs/protocol.md sections found: %v", heads)
	}
	cite := regexp.MustCompile(`protocol\.md\s+sections?\s+(\d+(?:\.\d+)?)(?:\s+and\s+(\d+(?:\.\d+)?))?`)
	n := 0
	walkText(t, func(path, text string) {
		for _, m := range cite.FindAllStringSubmatch(strings.ReplaceAll(text, "\n//", ""), -1) {
			for _, sec := range m[1:] {
				if sec == "" {
					continue
				}
				n++
				if !heads[sec] {
					t.Errorf("%s cites docs/protocol.md section %s, which does not exist", path, sec)
				}
			}
		}
	})
	if n < 20 {
		t.Errorf("only %d citations found; the pattern is broken", n)
	}
}

// Nothing in the project points outside the repository (only .ci/run may use the shared
// folder beside it):
// no path into it, and no relative Markdown link that climbs above the root.
func TestNoLinkLeavesTheRepository(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)`)
	outside := regexp.MustCompile(`\.\./` + `shared|\bshared/(spec|reference|NOTES)`)
	walkText(t, func(path, text string) {
		if outside.MatchString(text) {
			t.Errorf("%s points outside the repository: %q", path, outside.FindString(text))
		}
		if filepath.Ext(path) != ".md" {
			return
		}
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p, err := filepath.Abs(filepath.Join(filepath.Dir(path), target))
			if err == nil && !strings.HasPrefix(p, abs+string(filepath.Separator)) && p != abs {
				t.Errorf("%s links to %s, outside the repository", path, target)
			}
		}
	})
}

// The label meanings the report and the viewer print are the table of docs/protocol.md
// section 2.1, row for row.
func TestLabelMeaningsAreTheProtocolTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, _ := strings.Cut(string(doc), "### 2.1 Labels")
	sec, _, _ = strings.Cut(sec, "####")
	row := regexp.MustCompile("(?m)^\\| `([A-Z0-9_]+)` \\| (.*) \\| (.*) \\|$")
	rows := row.FindAllStringSubmatch(sec, -1)
	if len(rows) != len(LabelMeanings) || len(Labels) != len(LabelMeanings) {
		t.Fatalf("docs/protocol.md section 2.1 has %d label rows; LabelMeanings %d, Labels %d", len(rows), len(LabelMeanings), len(Labels))
	}
	for i, m := range rows {
		got := LabelMeanings[i]
		if got.Label != m[1] || got.Label != Labels[i] || got.Meaning != m[2] || got.Should != m[3] {
			t.Errorf("row %d: LabelMeanings has %+v; docs/protocol.md says %q | %q | %q", i, got, m[1], m[2], m[3])
		}
	}
}
