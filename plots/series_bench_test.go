package plots

import (
	"fmt"
	"image"
	"testing"

	"gonum.org/v1/plot/vg/draw"
)

// BenchmarkSeriesAlone draws only one counter's line of n samples (a
// random walk, the worst case) into the data area of a panel 1,100 pixels
// wide whose axes are already drawn: what one series costs, without the
// panel's fixed cost (its axes, ticks and labels) that BenchmarkSeriesLine
// includes. Up to four samples a column of pixels (4,400 here) every
// sample is drawn, and ns/sample stays flat: drawing is linear in the
// samples. Beyond, decimate keeps four a column and ns/sample falls.
func BenchmarkSeriesAlone(b *testing.B) {
	for _, n := range []int{600, 1200, 2400, 3600, 36_000} {
		xy := randomWalk(n)
		b.Run(fmt.Sprintf("samples=%d", n), func(b *testing.B) {
			img := image.NewRGBA(image.Rect(0, 0, 1200, 240))
			p := newPlot("", "time (s)", "count")
			line := newSeriesLine(xy, draw.LineStyle{Color: palette[0], Width: px(3)})
			p.Add(line)
			c := draw.New(newRGBACanvas(img))
			p.Draw(c)
			data := p.DataCanvas(c)
			for b.Loop() {
				line.Plot(data, p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sample")
		})
	}
}
