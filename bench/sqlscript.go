package bench

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// The pgbench references run the very statements the plugins run: rather
// than copies that drift from the code, benchreport reads the queries from
// their sqlc source files (sql/<owner>/queries/*.sql) by name and binds their
// named parameters to pgbench variables.

// NamedQuery returns the statement named name in a sqlc query file: the
// text after its "-- name: <name> :<kind>" line up to the next such line,
// without comment lines, ending with a semicolon.
func NamedQuery(file []byte, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("query name is empty")
	}
	var (
		out   []string
		found bool
		in    bool
	)
	for _, line := range strings.Split(string(file), "\n") {
		trimmed := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(trimmed, "-- name:"); ok {
			in = false // the next query
			fields := strings.Fields(rest)
			if len(fields) >= 1 && fields[0] == name {
				if found {
					return "", fmt.Errorf("query %q is named twice", name)
				}
				found, in = true, true
			}
			continue
		}
		if !in || trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		out = append(out, strings.TrimRight(line, " \t\r"))
	}
	if !found {
		return "", fmt.Errorf("no query named %q", name)
	}
	q := strings.TrimSpace(strings.Join(out, "\n"))
	if q == "" || q == ";" {
		return "", fmt.Errorf("query %q is empty", name)
	}
	if !strings.HasSuffix(q, ";") {
		q += ";"
	}
	return q, nil
}

// ReadNamedQuery is NamedQuery on the first of paths that exists (a query
// file may move, e.g. into the plugin's own folder).
func ReadNamedQuery(name string, paths ...string) (string, string, error) {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		q, err := NamedQuery(b, name)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", p, err)
		}
		return q, p, nil
	}
	return "", "", fmt.Errorf("query %s: none of %s exists (run from the repository's root)", name, strings.Join(paths, ", "))
}

// BindNamed replaces each sqlc named parameter (@name, sqlc.arg(name),
// sqlc.narg(name), sqlc.slice(name)) of query with
// args[name]: a pgbench variable (":page_id"), a literal ("NULL") or any
// expression. Text inside single-quoted literals, quoted identifiers and
// comments is left alone, and so is a "@" not followed by a letter or "_"
// (an operator). Every parameter must have an argument.
func BindNamed(query string, args map[string]string) (string, error) {
	var b bytes.Buffer
	b.Grow(len(query))
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := skipQuoted(query, i, c)
			b.WriteString(query[i:j])
			i = j
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j
		case c == 's' && (i == 0 || !identPart(query[i-1])) && strings.HasPrefix(query[i:], "sqlc."):
			name, j, ok := sqlcArg(query, i)
			if !ok {
				b.WriteByte(c)
				i++
				continue
			}
			v, found := args[name]
			if !found {
				return "", fmt.Errorf("parameter sqlc.…(%s) has no argument", name)
			}
			b.WriteString(v)
			i = j
		case c == '@' && i+1 < len(query) && identStart(query[i+1]):
			j := i + 1
			for j < len(query) && identPart(query[j]) {
				j++
			}
			name := query[i+1 : j]
			v, ok := args[name]
			if !ok {
				return "", fmt.Errorf("parameter @%s has no argument", name)
			}
			b.WriteString(v)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// sqlcArg reads sqlc.arg(name), sqlc.narg(name) or sqlc.slice(name) (the
// name bare or single-quoted) at i, returning the name and the index after
// the closing parenthesis.
func sqlcArg(s string, i int) (name string, end int, ok bool) {
	rest, found := strings.CutPrefix(s[i:], "sqlc.")
	if !found {
		return "", 0, false
	}
	for _, fn := range []string{"arg(", "narg(", "slice("} {
		inner, found := strings.CutPrefix(rest, fn)
		if !found {
			continue
		}
		paren := strings.IndexByte(inner, ')')
		if paren < 0 {
			return "", 0, false
		}
		name = strings.TrimSpace(inner[:paren])
		if len(name) >= 2 && name[0] == '\'' && name[len(name)-1] == '\'' {
			name = name[1 : len(name)-1]
		}
		if name == "" || !identStart(name[0]) {
			return "", 0, false
		}
		for k := 1; k < len(name); k++ {
			if !identPart(name[k]) {
				return "", 0, false
			}
		}
		return name, i + len("sqlc.") + len(fn) + paren + 1, true
	}
	return "", 0, false
}

// skipQuoted returns the index just after the quoted text starting at i
// (a doubled quote is an escaped one), or len(s) when it is not closed.
func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			j++
			continue
		}
		return j + 1
	}
	return len(s)
}

func identStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func identPart(c byte) bool { return identStart(c) || c >= '0' && c <= '9' }
