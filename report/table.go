package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table is a borderless table of text, printed as tsim prints every
// table: its first columns left aligned (names), the rest right aligned
// (numbers), a line under the header.
//
// A table wider than its writer's width (WithWidth; a terminal's) is
// printed in several parts, one under the other, each with the leading
// name columns and as many of the others as fit, in order; a cell that
// cannot fit even alone is cut with "…". A writer without a width gets
// the table whole, as wide as it is.
type Table struct {
	w      io.Writer
	left   int
	header []string
	rows   [][]string
}

// NewTable returns a table whose first left columns are left aligned
// (names) and the rest right aligned (numbers).
func NewTable(w io.Writer, left int, header ...string) *Table {
	return &Table{w: w, left: left, header: header}
}

// Append adds a row.
func (t *Table) Append(row []string) error {
	if len(row) != len(t.header) {
		return fmt.Errorf("a row of %d cells in a table of %d columns", len(row), len(t.header))
	}
	t.rows = append(t.rows, row)
	return nil
}

// Render prints the table.
func (t *Table) Render() error {
	width := Width(t.w)
	if width <= 0 || lineWidth(t.widths(allColumns(len(t.header)))) <= width {
		return t.render(allColumns(len(t.header)), 0)
	}
	for i, cols := range t.parts(width) {
		if i > 0 {
			if _, err := io.WriteString(t.w, "\n"); err != nil {
				return err
			}
		}
		if err := t.render(cols, width); err != nil {
			return err
		}
	}
	return nil
}

// names is how many leading columns every part repeats: the left-aligned
// name columns, at least one.
func (t *Table) names() int { return min(max(t.left, 1), len(t.header)) }

// parts splits the columns into parts of at most width characters a
// line: each part the name columns and the next columns that fit (at
// least one).
func (t *Table) parts(width int) [][]int {
	ws := t.widths(allColumns(len(t.header)))
	keep := allColumns(t.names())
	var parts [][]int
	cur := append([]int(nil), keep...)
	for c := t.names(); c < len(t.header); c++ {
		next := append(append([]int(nil), cur...), c)
		if len(cur) > len(keep) && lineWidth(pick(ws, next)) > width {
			parts = append(parts, cur)
			next = append(append([]int(nil), keep...), c)
		}
		cur = next
	}
	if len(cur) > len(keep) || len(parts) == 0 {
		parts = append(parts, cur)
	}
	return parts
}

// render prints the columns cols of the table, cutting cells so that a
// line fits width (0: no limit).
func (t *Table) render(cols []int, width int) error {
	header := pick(t.header, cols)
	rows := make([][]string, len(t.rows))
	for i, r := range t.rows {
		rows[i] = pick(r, cols)
	}
	if width > 0 {
		cutToFit(header, rows, width)
	}
	left := 0
	for _, c := range cols {
		if c < t.left {
			left++
		}
	}
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < left {
			align[i] = tw.AlignLeft
		}
	}
	tb := tablewriter.NewTable(t.w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.Border{Left: tw.Off, Right: tw.Off, Top: tw.Off, Bottom: tw.Off},
			Settings: tw.Settings{Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.On}, Lines: tw.Lines{ShowHeaderLine: tw.On}},
			Symbols:  tw.NewSymbols(tw.StyleLight),
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	tb.Header(header)
	for _, r := range rows {
		if err := tb.Append(r); err != nil {
			return err
		}
	}
	return tb.Render()
}

// cutToFit cuts the widest column's cells, one column after another,
// until a line fits width (or every column is down to a few characters).
func cutToFit(header []string, rows [][]string, width int) {
	const least = 6
	for {
		ws := make([]int, len(header))
		for i, h := range header {
			ws[i] = twwidth.Width(h)
		}
		for _, r := range rows {
			for i, c := range r {
				ws[i] = max(ws[i], twwidth.Width(c))
			}
		}
		over := lineWidth(ws) - width
		if over <= 0 {
			return
		}
		widest := 0
		for i := range ws {
			if ws[i] > ws[widest] {
				widest = i
			}
		}
		to := max(ws[widest]-over, least)
		if to >= ws[widest] {
			return
		}
		header[widest] = Cut(header[widest], to)
		for _, r := range rows {
			r[widest] = Cut(r[widest], to)
		}
	}
}

// Cut shortens s to at most n columns of a terminal, ending it with "…"
// when cut.
func Cut(s string, n int) string {
	if twwidth.Width(s) <= n {
		return s
	}
	return twwidth.Truncate(s, n-1) + "…"
}

// widths are the columns' widths: their widest cell.
func (t *Table) widths(cols []int) []int {
	ws := make([]int, len(cols))
	for i, c := range cols {
		ws[i] = twwidth.Width(t.header[c])
		for _, r := range t.rows {
			ws[i] = max(ws[i], twwidth.Width(r[c]))
		}
	}
	return ws
}

// lineWidth is the width of a line of columns of widths ws: each cell
// with a space either side, "│" between cells.
func lineWidth(ws []int) int {
	n := len(ws) - 1
	for _, w := range ws {
		n += w + 2
	}
	return n
}

func allColumns(n int) []int {
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	return cols
}

func pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, k := range idx {
		out[i] = xs[k]
	}
	return out
}

// WithWidth returns a writer for w whose tables (Table, PrintReport) are
// at most width columns wide; width ≤ 0 means no limit.
func WithWidth(w io.Writer, width int) io.Writer {
	if width <= 0 {
		return w
	}
	return &sized{w, width}
}

type sized struct {
	io.Writer
	width int
}

// Width is the width w's tables must fit (WithWidth), or 0 for none.
func Width(w io.Writer) int {
	if s, ok := w.(*sized); ok {
		return s.width
	}
	return 0
}

// note prints a note under a table: as written, or, on a writer with a
// width, its words wrapped to the width, each line after the first
// indented one more than the first.
func note(w io.Writer, text string) {
	width := Width(w)
	if width <= 0 {
		io.WriteString(w, text+"\n")
		return
	}
	indent := len(text) - len(strings.TrimLeft(text, " "))
	words := strings.Fields(text)
	line := strings.Repeat(" ", indent)
	start := len(line)
	for _, word := range words {
		if twwidth.Width(line) > start && twwidth.Width(line)+1+twwidth.Width(word) > width {
			io.WriteString(w, line+"\n")
			line = strings.Repeat(" ", indent+1)
			start = len(line)
		}
		if twwidth.Width(line) > start {
			line += " "
		}
		line += word
	}
	io.WriteString(w, line+"\n")
}

func notef(w io.Writer, format string, args ...any) { note(w, fmt.Sprintf(format, args...)) }
