package plots_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tsim-dev/tsim/plots"
)

// A sweep chart of goodput against the connection limit, with 95%
// confidence half-widths as error bars, written as a PNG file.
func ExampleSweep() {
	f, err := plots.Sweep("goodput against maxconnection", "maxconnection", "requests per second", []plots.SweepLine{{
		Label: "sync",
		X:     []string{"1", "2", "4", "8", "16"},
		Y:     []float64{6.6, 13.3, 26.5, 51.0, 66.2},
		Err:   []float64{0.2, 0.3, 0.6, 1.1, 0.9},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "tsim-plots")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	out, err := os.Create(filepath.Join(dir, "sweep-throughput.png"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Close()
	if err := f.WritePNG(out); err != nil {
		fmt.Println(err)
		return
	}
	w, h := f.Pixels()
	fmt.Printf("%d×%d PNG\n", w, h)
	// Output: 1200×800 PNG
}
