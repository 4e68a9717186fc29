package docsearch

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Entry is one searchable section.
type Entry struct {
	// Path is unique: "docs/PLUGINS.md#events" or a reference pointer.
	Path string
	// Kind is "doc" or "api".
	Kind  string
	Title string
	Body  string
}

// Sections splits a Markdown file at its ATX headings (# to ######, not
// inside fenced code). Each section runs to the next heading; its path is
// file#anchor with GitHub's anchor rules (duplicates get -1, -2, …). Text
// before the first heading is a section titled and pathed by the file.
// Titles and bodies are plain text (plainText): what a reader sees, not
// the Markdown.
func Sections(file string, md []byte) []Entry {
	var (
		out     []Entry
		cur     = Entry{Path: file, Kind: "doc", Title: file}
		body    strings.Builder
		fence   string
		anchors = map[string]int{}
	)
	flush := func() {
		cur.Body = plainText(body.String())
		if cur.Body != "" || cur.Path != file {
			out = append(out, cur)
		}
		body.Reset()
	}
	for line := range strings.Lines(string(md)) {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				continue
			}
			body.WriteString(fenceLine + line) // code is kept as it is
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if title, ok := heading(line); ok {
			flush()
			a := Anchor(title)
			if n := anchors[a]; n > 0 {
				anchors[a] = n + 1
				a = fmt.Sprintf("%s-%d", a, n)
			} else {
				anchors[a] = 1
			}
			cur = Entry{Path: file + "#" + a, Kind: "doc", Title: plainInline(title)}
			continue
		}
		body.WriteString(line)
	}
	flush()
	return out
}

// heading reads an ATX heading line: up to three spaces, 1-6 '#', then a
// space or the end; closing #s are dropped.
func heading(line string) (string, bool) {
	line = strings.TrimRight(line, "\r\n")
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return "", false
	}
	rest := line[indent:]
	n := len(rest) - len(strings.TrimLeft(rest, "#"))
	if n < 1 || n > 6 {
		return "", false
	}
	rest = rest[n:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	title := strings.TrimSpace(rest)
	if t := strings.TrimRight(title, "#"); t != title && (t == "" || strings.HasSuffix(t, " ")) {
		title = strings.TrimSpace(t)
	}
	return title, title != ""
}

// Anchor is GitHub's heading anchor: lower case, letters, digits, spaces
// as hyphens, '-' and '_' kept, the rest dropped.
func Anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// DocEntries are the sections of every Markdown file of fsys, by path.
func DocEntries(fsys fs.FS) ([]Entry, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Ext(p) == ".md" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Entry
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		out = append(out, Sections(f, b)...)
	}
	return out, nil
}

// fenceLine marks, in a section's text, a line of code (its fences are
// dropped): code is not Markdown, so plainText leaves it as it is.
const fenceLine = "\x00"

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	image       = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	link        = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	listMarker  = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+`)
	tableRule   = regexp.MustCompile(`^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$`)
)

// plainText is the text a reader of Markdown md sees: no HTML comments
// (notes for the docs' maintainers and their tooling), no emphasis or code
// marks, links as their text, no list, quote or table syntax, no blank
// lines; code blocks as they are, without their fences. No "**" is left in it, so that the
// search's highlight marks (ts_headline's StartSel and StopSel, **) are
// the only ones in a snippet.
func plainText(md string) string {
	md = htmlComment.ReplaceAllString(md, "")
	var out []string
	for line := range strings.Lines(md) {
		line = strings.TrimRight(line, "\r\n")
		if code, ok := strings.CutPrefix(line, fenceLine); ok {
			if strings.TrimSpace(code) != "" {
				out = append(out, code)
			}
			continue
		}
		if tableRule.MatchString(line) && strings.Contains(line, "-") {
			continue
		}
		line = listMarker.ReplaceAllString(line, "")
		line = strings.TrimLeft(strings.TrimSpace(line), "> ")
		if strings.Contains(line, "|") {
			line = strings.Join(strings.Fields(strings.ReplaceAll(line, "|", " ")), " ")
		}
		if line = plainInline(line); line != "" {
			out = append(out, line)
		}
	}
	return noDoubleStars(strings.TrimSpace(strings.Join(out, "\n")))
}

// plainInline is one line of Markdown (a heading's title) without its
// inline marks: emphasis and code marks dropped, links as their text.
func plainInline(line string) string {
	line = image.ReplaceAllString(line, "$1")
	line = link.ReplaceAllString(line, "$1")
	return noDoubleStars(strings.NewReplacer("**", "", "__", "", "`", "").Replace(line))
}

// noDoubleStars leaves no "**" in s (a glob in code, "***").
func noDoubleStars(s string) string {
	for strings.Contains(s, "**") {
		s = strings.ReplaceAll(s, "**", "*")
	}
	return s
}
