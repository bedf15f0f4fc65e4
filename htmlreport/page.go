package htmlreport

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strings"
)

// Page is one self-contained HTML file: a title, sections of text, tables
// and charts, the charting library and the page's script and style
// inline. It opens from disk with no network; its bytes depend only on
// what it holds.
//
// A command builds the page of its results (Experiment for tsim run) and
// may add sections of its own (Add): explain its diagnosis, fit its fit.
type Page struct {
	Title string
	// Lines are the facts under the title: file, seed, replications.
	Lines    []string
	Sections []*Section
	// Budget bounds the chart values the page holds (0: DefaultBudget);
	// the charts of a larger page are thinned to fit (Section.Charts).
	Budget int
}

// DefaultBudget is how many chart values a page holds at most before its
// time series are thinned: about 5 MB of data.
const DefaultBudget = 800_000

// Section is a part of a page, with a heading and an anchor in the page's
// table of contents. Its blocks come in order.
type Section struct {
	ID    string // the anchor: letters, digits and '-'
	Title string
	// Collapsed sections start folded (a farm's every machine, a long
	// list); a click opens them.
	Collapsed bool
	Blocks    []Block
}

// Block is one piece of a section: exactly one of its fields is set.
type Block struct {
	Text     string    // a paragraph
	Pre      string    // preformatted text (a diagnosis as the terminal prints it)
	List     []string  // a bulleted list
	Warnings []string  // a list set apart as warnings
	Table    *Table    // a table
	Charts   *Grid     // charts side by side
	Sub      *Section  // a subsection (one level; its title is a smaller heading)
	Findings []Finding // notes with a level, as PAL lists its alerts
}

// Table is a table of text cells; the first Left columns are names (left
// aligned), the others numbers.
type Table struct {
	Caption string
	Header  []string
	// Titles, where set, explain each header (a tooltip): the PerfMon
	// counter a column stands for.
	Titles []string
	Rows   [][]string
	Left   int
	// Classes, where set, mark cells: Classes[r][c] is a CSS class
	// ("up", "down", "same", "warn") or "".
	Classes [][]string
	Notes   []string
}

// Grid is charts laid side by side, Columns to a row.
type Grid struct {
	Columns int
	Charts  []*Chart
}

// Finding is a note with a level: "bad" (requests were lost or waited
// long), "warn" (a queue formed), "info".
type Finding struct {
	Level string
	Text  string
}

// Add appends a section and returns it.
func (p *Page) Add(s *Section) *Section {
	p.Sections = append(p.Sections, s)
	return s
}

// Text appends a paragraph.
func (s *Section) Text(format string, args ...any) {
	s.Blocks = append(s.Blocks, Block{Text: fmt.Sprintf(format, args...)})
}

// Add appends blocks.
func (s *Section) Add(b ...Block) { s.Blocks = append(s.Blocks, b...) }

// Charts returns every chart of the section and its subsections, in page
// order.
func (s *Section) Charts() []*Chart {
	var out []*Chart
	for _, b := range s.Blocks {
		if b.Charts != nil {
			out = append(out, b.Charts.Charts...)
		}
		if b.Sub != nil {
			out = append(out, b.Sub.Charts()...)
		}
	}
	return out
}

// charts returns every chart of the page, in order.
func (p *Page) charts() []*Chart {
	var out []*Chart
	for _, s := range p.Sections {
		out = append(out, s.Charts()...)
	}
	return out
}

//go:embed vendor/uplot/uPlot.iife.min.js
var uplotJS string

//go:embed vendor/uplot/uPlot.min.css
var uplotCSS string

//go:embed assets/report.js
var reportJS string

//go:embed assets/report.css
var reportCSS string

//go:embed assets/page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"cell": func(t *Table, r, c int) string {
		if r < len(t.Classes) && c < len(t.Classes[r]) {
			return t.Classes[r][c]
		}
		return ""
	},
	"num": func(t *Table, c int) bool { return c >= t.Left },
	"title": func(t *Table, c int) string {
		if c < len(t.Titles) {
			return t.Titles[c]
		}
		return ""
	},
	"cols": func(g *Grid) int { return max(1, g.Columns) },
}).Parse(pageHTML))

// HTML renders the page. Its charts are thinned to the page's budget
// first (fitBudget), which changes them.
func (p *Page) HTML() ([]byte, error) {
	charts := p.charts()
	budget := p.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	fitBudget(charts, budget)
	seen := map[string]bool{}
	for _, c := range charts {
		if seen[c.ID] {
			return nil, fmt.Errorf("htmlreport: two charts named %q", c.ID)
		}
		seen[c.ID] = true
	}
	data, err := dataJSON(charts)
	if err != nil {
		return nil, fmt.Errorf("htmlreport: %w", err)
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, struct {
		*Page
		UPlotJS, ReportJS   template.JS
		UPlotCSS, ReportCSS template.CSS
		Data                template.JS
	}{p, template.JS(scriptSafe(uplotJS)), template.JS(scriptSafe(reportJS)),
		template.CSS(uplotCSS), template.CSS(reportCSS), template.JS(data)})
	if err != nil {
		return nil, fmt.Errorf("htmlreport: %w", err)
	}
	return b.Bytes(), nil
}

// scriptSafe keeps a script from ending its element early.
func scriptSafe(js string) string {
	return strings.ReplaceAll(js, "</script", `<\/script`)
}

// fitBudget thins the time series of charts that hold more than budget
// values in all: every frame of more than minRows rows keeps at most the
// same number of rows, the largest that fits (decimate keeps each
// bucket's extremes). Scatters, distributions and sweeps are small and
// kept as they are.
func fitBudget(charts []*Chart, budget int) {
	total := 0
	for _, c := range charts {
		total += c.points()
	}
	if total <= budget {
		return
	}
	// Find the largest row cap that fits, by bisection on the cap.
	cost := func(cap int) int {
		n := 0
		for _, c := range charts {
			for _, f := range c.Frames {
				rows := len(f.X)
				if decimable(c) && rows > cap {
					rows = cap
				}
				n += rows * (1 + len(f.Y))
			}
		}
		return n
	}
	lo, hi := minRows, 1<<20
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if cost(mid) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for _, c := range charts {
		if !decimable(c) {
			continue
		}
		for i, f := range c.Frames {
			c.Frames[i] = decimate(f, lo)
		}
	}
}

// maxRows is the most rows a time series keeps (a chart is about a
// thousand pixels wide; zoomed in tenfold, it still has a pair of values
// every ten pixels).
const maxRows = 2000

// minRows is the fewest rows a time series is thinned to, whatever the
// budget: 60 buckets of lowest and highest value.
const minRows = 120

// decimable reports whether a chart is a time series that decimate may
// thin (a scatter is not: its points are thinned by cell, thinScatter).
func decimable(c *Chart) bool {
	for _, s := range c.Series {
		if s.Points || s.Err != nil || s.Lo != nil {
			return false
		}
	}
	return c.X.Labels == nil && c.X.Scale == ""
}

// Insert adds s after the section whose ID is after (first when after is
// ""), or at the end when there is none.
func (p *Page) Insert(after string, s *Section) {
	if after == "" {
		p.Sections = append([]*Section{s}, p.Sections...)
		return
	}
	for i, x := range p.Sections {
		if x.ID == after {
			p.Sections = append(p.Sections[:i+1], append([]*Section{s}, p.Sections[i+1:]...)...)
			return
		}
	}
	p.Sections = append(p.Sections, s)
}
