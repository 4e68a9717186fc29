package svc

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/WEBHOOKS.md quotes the receivers of docs/examples/webhooks: every
// code block that follows a link to one of them must be that file's own
// text, so the page cannot drift from the receivers the e2e test runs.
// The page is embedded, so docs search finds it.
func TestWebhooksPageQuotesTheReceiversAsTheyAre(t *testing.T) {
	page, err := Docs.ReadFile("docs/WEBHOOKS.md")
	if err != nil {
		t.Fatalf("docs/WEBHOOKS.md is not embedded: %v", err)
	}
	link := regexp.MustCompile(`\]\((examples/webhooks/[^)]+)\)`)
	var (
		pending, fence string
		block          strings.Builder
		quoted         = map[string]bool{}
	)
	for line := range strings.Lines(string(page)) {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "" && trimmed == fence:
			if pending != "" {
				file, err := os.ReadFile(filepath.Join("docs", pending))
				if err != nil {
					t.Fatalf("the page quotes %s: %v", pending, err)
				}
				if !strings.Contains(string(file), block.String()) {
					t.Errorf("the code quoted from %s is not in the file:\n%s", pending, block.String())
				}
				quoted[pending] = true
			}
			fence, pending = "", ""
			block.Reset()
		case fence != "":
			block.WriteString(line)
		case strings.HasPrefix(trimmed, "```"):
			fence = "```"
		case strings.HasPrefix(trimmed, "#"):
			pending = ""
		default:
			if m := link.FindStringSubmatch(line); m != nil {
				pending = m[1]
			}
		}
	}
	for _, f := range []string{"examples/webhooks/go/main.go", "examples/webhooks/node/receiver.mjs", "examples/webhooks/python/receiver.py"} {
		if !quoted[f] {
			t.Errorf("the page quotes nothing from %s", f)
		}
	}
}
