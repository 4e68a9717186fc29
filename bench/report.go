package bench

import (
	"fmt"
	"math"
	"strings"
)

// Row is one figure of the report: ours, its reference measured in the same
// run, their ratio, the target and the command that produced it.
type Row struct {
	What      string `json:"what"`
	Ours      string `json:"ours"`
	Reference string `json:"reference"`
	Ratio     string `json:"ratio"`
	Target    string `json:"target"`
	// Verdict is "met", "MISSED", "n/a" or a reason the figure is missing.
	Verdict string `json:"verdict"`
	Command string `json:"command"`
}

// Report is the Markdown document benchreport writes.
type Report struct {
	Title    string
	Intro    []string
	Env      [][2]string
	Rows     []Row
	Sections []Section
}

// Section is a titled block of Markdown after the table.
type Section struct {
	Title string
	Body  string
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.Title)
	for _, p := range r.Intro {
		b.WriteString(p + "\n\n")
	}
	if len(r.Env) > 0 {
		b.WriteString("| machine and run | |\n|---|---|\n")
		for _, kv := range r.Env {
			fmt.Fprintf(&b, "| %s | %s |\n", cell(kv[0]), cell(kv[1]))
		}
		b.WriteString("\n")
	}
	b.WriteString("| # | figure | ours | reference (same run) | ratio | target | met | command |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for i, row := range r.Rows {
		cmd := ""
		if row.Command != "" {
			cmd = "`" + strings.ReplaceAll(row.Command, "`", "'") + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", i+1, cell(row.What), cell(row.Ours),
			cell(row.Reference), cell(row.Ratio), cell(row.Target), cell(row.Verdict), cell(cmd))
	}
	b.WriteString("\n")
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", s.Title, strings.TrimSpace(s.Body))
	}
	return b.String()
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", "<br>")
}

// Verdict says whether ok holds, "n/a" when the figure is missing.
func Verdict(have bool, ok bool) string {
	switch {
	case !have:
		return "n/a"
	case ok:
		return "met"
	default:
		return "MISSED"
	}
}

// Num formats a count or rate with thousands separators.
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Pct formats a ratio as a percentage.
func Pct(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", 100*r)
}

// Ms formats microseconds as milliseconds.
func Ms(us float64) string { return fmt.Sprintf("%.2f ms", us/1e3) }

// MB formats bytes as MiB.
func MB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }
