package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Chart is one interactive chart: its series and their data, as the page's
// script hands them to uPlot. A chart's data are Frames, each a table of x
// values and one column per series it holds; the script joins the frames
// on their x values (uPlot.join), so that series sampled at other instants
// (two runs of a diff, the outcomes of a scatter) share one chart. Series
// take the frames' columns in order: the first frame's, then the next's.
type Chart struct {
	// ID names the chart on the page and in the page's status (the
	// browser test finds charts by it): "counters/<variant>/<tier>/<panel>",
	// "latency/<variant>", "cdf", "sweep/<metric>".
	ID    string `json:"id"`
	Title string `json:"title"`
	// Note is a line under the chart (what a series means, how it was
	// thinned).
	Note   string   `json:"note,omitempty"`
	X      Axis     `json:"x"`
	Y      Axis     `json:"y"`
	Series []Series `json:"series"`
	Frames []Frame  `json:"frames"`
	// Height in CSS pixels of the plotting area; 0 chooses 220.
	Height int `json:"height,omitempty"`
	// Sync names the group of charts whose x axes zoom together and whose
	// cursors move together (the counters of one page); "" for none.
	Sync string `json:"sync,omitempty"`
}

// Axis is how one axis is drawn.
type Axis struct {
	Label string `json:"label"`
	// Scale: "" linear, "log" base-10 logarithmic (positive values only).
	Scale string `json:"scale,omitempty"`
	// Min and Max fix the range where set (a shared scale across charts).
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Labels, where set, name the x values 0, 1, 2, ... (a sweep over
	// values that are not numbers).
	Labels []string `json:"labels,omitempty"`
	// Unit is appended to values on hover ("s", "%").
	Unit string `json:"unit,omitempty"`
}

// Series is one line or point cloud of a chart.
type Series struct {
	Label string `json:"label"`
	// Key names what the series stands for across pages (a scenario's
	// label), for a diff to find it; "" where the chart says it.
	Key   string `json:"key,omitempty"`
	Color string `json:"color"`
	// Width of the line in CSS pixels; 0 chooses 1.5.
	Width float64 `json:"width,omitempty"`
	// Dash is a dash pattern in CSS pixels (on, off); none for a solid
	// line.
	Dash []int `json:"dash,omitempty"`
	// Points draws the values as dots without a line (a scatter).
	Points bool `json:"points,omitempty"`
	// Gaps breaks the line at values that are null (an interval in which
	// nothing ended); otherwise a line bridges them.
	Gaps bool `json:"gaps,omitempty"`
	// Err, where set, are confidence half-widths, one for each x of the
	// series' frame: drawn as bars from value−err to value+err.
	Err Column `json:"err,omitempty"`
	// ErrMin and ErrMax clip the bars (a share stops at 0 and 100%).
	ErrMin *float64 `json:"errMin,omitempty"`
	ErrMax *float64 `json:"errMax,omitempty"`
	// Lo and Hi, where set instead of Err, are each bar's ends (an
	// interval that is not symmetric); a NaN end draws no bar.
	Lo Column `json:"lo,omitempty"`
	Hi Column `json:"hi,omitempty"`
	// Size of a scatter's dots in CSS pixels; 0 chooses 4.
	Size float64 `json:"size,omitempty"`
	// Hidden series start toggled off (a click on the legend shows them).
	Hidden bool `json:"hidden,omitempty"`
}

// Frame is a table: x values, ascending and distinct, and columns of
// values at them. NaN is no value (null in the page's data).
type Frame struct {
	X Exact    `json:"x"`
	Y []Column `json:"y"`
}

// Exact is a list of x values, written exactly (the shortest form that
// reads back as the same float64), so that distinct values stay distinct
// in the page.
type Exact []float64

// MarshalJSON writes the values exactly.
func (c Exact) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+8*len(c))
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("x value %g", v)
		}
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, ']'), nil
}

// Column is a list of values written to the page with six significant
// digits (enough for any picture, about half the bytes of a float64's
// shortest form), NaN and infinities as null.
type Column []float64

// MarshalJSON writes the values compactly.
func (c Column) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+8*len(c))
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, v)
	}
	return append(b, ']'), nil
}

// appendNum appends v in JSON with at most six significant digits.
func appendNum(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return append(b, "null"...)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		if v == 0 {
			return append(b, '0') // and not -0
		}
		if math.Abs(v) < 1e6 {
			return strconv.AppendInt(b, int64(v), 10)
		}
	}
	return strconv.AppendFloat(b, v, 'g', 6, 64)
}

// ptr returns a pointer to v, for an Axis's Min and Max.
func ptr(v float64) *float64 { return &v }

// check reports a chart whose frames do not match its series, or whose x
// values are not ascending and distinct: the script would draw nonsense.
func (c *Chart) check() error {
	n := 0
	for fi, f := range c.Frames {
		for i := 1; i < len(f.X); i++ {
			if !(f.X[i] > f.X[i-1]) {
				return fmt.Errorf("chart %s: frame %d: x values not ascending at %d (%g after %g)", c.ID, fi, i, f.X[i], f.X[i-1])
			}
		}
		for _, y := range f.Y {
			if len(y) != len(f.X) {
				return fmt.Errorf("chart %s: frame %d: %d values for %d x values", c.ID, fi, len(y), len(f.X))
			}
			if n < len(c.Series) {
				s := c.Series[n]
				if (s.Err != nil && len(s.Err) != len(f.X)) || len(s.Lo) != len(s.Hi) || (s.Lo != nil && len(s.Lo) != len(f.X)) {
					return fmt.Errorf("chart %s: series %q: %d half-widths, %d and %d bounds for %d x values", c.ID, s.Label, len(s.Err), len(s.Lo), len(s.Hi), len(f.X))
				}
			}
			n++
		}
	}
	if n != len(c.Series) {
		return fmt.Errorf("chart %s: %d series for %d columns", c.ID, len(c.Series), n)
	}
	return nil
}

// points is how many values a chart holds, for the budget.
func (c *Chart) points() int {
	n := 0
	for _, f := range c.Frames {
		n += len(f.X) * (1 + len(f.Y))
	}
	return n
}

// dataJSON is the page's data: every chart, in page order.
func dataJSON(charts []*Chart) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"charts":[`)
	for i, c := range charts {
		if i > 0 {
			b.WriteString(",\n")
		}
		if err := c.check(); err != nil {
			return nil, err
		}
		if c.Series == nil {
			c.Series = []Series{}
		}
		if c.Frames == nil {
			c.Frames = []Frame{}
		}
		for i := range c.Frames {
			if c.Frames[i].Y == nil {
				c.Frames[i].Y = []Column{}
			}
		}
		j, err := json.Marshal(c) // escapes <, > and & in strings: safe inside a script element
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.ID, err)
		}
		b.Write(j)
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// M2 decimation. A frame of many rows is cut into buckets of consecutive
// rows; each bucket becomes two rows, at its first and last x, holding, for
// every column, the bucket's lowest and highest value in the order they
// came. The line through them covers each bucket's range, so a spike of a
// single sample survives, and every column keeps the frame's shared x.

// decimate reduces f to at most maxRows rows (maxRows ≥ 4); a frame that
// fits is returned as it is.
func decimate(f Frame, maxRows int) Frame {
	n := len(f.X)
	if n <= maxRows {
		return f
	}
	buckets := maxRows / 2
	out := Frame{X: make(Exact, 0, 2*buckets), Y: make([]Column, len(f.Y))}
	for k := range out.Y {
		out.Y[k] = make(Column, 0, 2*buckets)
	}
	for b := range buckets {
		lo, hi := b*n/buckets, (b+1)*n/buckets
		if hi-lo == 1 {
			out.X = append(out.X, f.X[lo])
			for k, col := range f.Y {
				out.Y[k] = append(out.Y[k], col[lo])
			}
			continue
		}
		out.X = append(out.X, f.X[lo], f.X[hi-1])
		for k, col := range f.Y {
			first, second := bucketExtremes(col[lo:hi])
			out.Y[k] = append(out.Y[k], first, second)
		}
	}
	return out
}

// bucketExtremes returns the lowest and the highest value of vs in the
// order they come (NaN where vs holds no value: a gap stays a gap).
func bucketExtremes(vs []float64) (first, second float64) {
	lo, hi := -1, -1
	for i, v := range vs {
		if math.IsNaN(v) {
			continue
		}
		if lo < 0 || v < vs[lo] {
			lo = i
		}
		if hi < 0 || v > vs[hi] {
			hi = i
		}
	}
	if lo < 0 {
		return math.NaN(), math.NaN()
	}
	if hi < lo {
		return vs[hi], vs[lo]
	}
	return vs[lo], vs[hi]
}

// thinScatter keeps at most one point of a cloud in each cell of a grid
// of cols × rows cells over the x range and the logarithm of the y range
// (latencies span decades): the first, in x order. A point alone in its
// cell (an outlier, a timeout among completions) is always kept; only
// dense clouds lose points, which lie on top of each other at the
// default zoom. Points with equal x keep the highest y: uPlot needs
// distinct x values. xs must be ascending.
func thinScatter(xs, ys []float64, cols, rows int) (Exact, Column) {
	if len(xs) == 0 {
		return Exact{}, Column{}
	}
	xmin, xmax := xs[0], xs[len(xs)-1]
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, y := range ys {
		if y > 0 {
			ymin, ymax = min(ymin, y), max(ymax, y)
		}
	}
	ly := func(y float64) float64 {
		if !(y > 0) {
			return math.Log10(ymin) - 1
		}
		return math.Log10(y)
	}
	cell := func(x, y float64) [2]int {
		cx, cy := 0, 0
		if xmax > xmin {
			cx = int(float64(cols-1) * (x - xmin) / (xmax - xmin))
		}
		if ymax > ymin {
			cy = int(float64(rows-1) * (ly(y) - math.Log10(ymin)) / (math.Log10(ymax) - math.Log10(ymin)))
		}
		return [2]int{cx, cy}
	}
	seen := map[[2]int]bool{}
	var ox Exact
	var oy Column
	for i, x := range xs {
		y := ys[i]
		if n := len(ox); n > 0 && ox[n-1] == x {
			oy[n-1] = max(oy[n-1], y)
			continue
		}
		k := cell(x, y)
		if seen[k] {
			continue
		}
		seen[k] = true
		ox, oy = append(ox, x), append(oy, y)
	}
	return ox, oy
}

// sortedXY returns the points sorted by x (then y), as columns.
func sortedXY(xs, ys []float64) (Column, Column) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmpFloat(xs[a], xs[b]); c != 0 {
			return c
		}
		return cmpFloat(ys[a], ys[b])
	})
	ox, oy := make(Column, len(idx)), make(Column, len(idx))
	for i, k := range idx {
		ox[i], oy[i] = xs[k], ys[k]
	}
	return ox, oy
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
