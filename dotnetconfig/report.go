package dotnetconfig

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText writes the report for a person: a line on the process, the
// table of effective values and the warnings.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".NET %s, %d processors, %s (preset %s)\n", r.DotNet, r.Cores, hostWords(r.Host), r.Preset)
	fmt.Fprintf(&b, "files, in the order applied: %s\n\n", strings.Join(r.Files, ", "))
	rows := [][]string{{"setting", "value", "tsim key", "from"}}
	for _, row := range r.Rows {
		rows = append(rows, []string{row.Setting, row.Value, row.Key, row.From})
	}
	writeTable(&b, rows)
	if len(r.Warnings) > 0 {
		noun := "warnings"
		if len(r.Warnings) == 1 {
			noun = "warning"
		}
		fmt.Fprintf(&b, "\n%d %s:\n", len(r.Warnings), noun)
		for _, wr := range r.Warnings {
			fmt.Fprintf(&b, "  %s\n", wr)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable writes rows as the other tsim tables look: columns separated
// by │, a rule under the header, no outer border.
func writeTable(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	last := len(width) - 1
	for ri, row := range rows {
		for i, cell := range row {
			if i > 0 {
				b.WriteString(" │ ")
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(cell)
			if i < last {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell)))
			}
		}
		b.WriteByte('\n')
		if ri == 0 {
			for i, wd := range width {
				if i > 0 {
					b.WriteString("┼")
				}
				n := wd + 2
				if i == last {
					n = wd + 1
				}
				b.WriteString(strings.Repeat("─", n))
			}
			b.WriteByte('\n')
		}
	}
}
