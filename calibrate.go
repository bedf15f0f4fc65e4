package tsim

import (
	"context"
	"fmt"
	"strings"

	"github.com/tsim-dev/tsim/calibrate"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/plots"
)

// CalibrateOptions say how Calibrate reads the capture and simulates; see
// calibrate.Options.
type CalibrateOptions = calibrate.Options

// Calibration is what Calibrate found: each tier's demands estimated from
// the capture, the calibrated experiment, and the simulated counters
// against the measured ones; see calibrate.Result. Its WriteText prints
// what tsim calibrate prints.
type Calibration struct {
	*calibrate.Result
}

// Calibrate estimates each mapped tier's demands from the PerfMon capture
// at capture (the utilisation law, Little's law), writes them into the
// experiment at experiment, simulates it and compares it with the
// capture. Nothing is written to disk: see WriteFiles.
func Calibrate(ctx context.Context, capture, experiment string, opt CalibrateOptions) (*Calibration, error) {
	r, err := calibrate.Run(ctx, capture, experiment, opt)
	if err != nil {
		return nil, err
	}
	return &Calibration{r}, nil
}

// WriteFiles writes calibrated.toml, calibration.png (in out's formats)
// and calibration.html, the estimates, what was written and the measured
// counters against the simulated as interactive charts, into out, each
// whole or not at all; the pictures and the page are made before anything
// is written.
func (c *Calibration) WriteFiles(out *Output) (written, warnings []string, err error) {
	pic := picture{stem: "calibration"}
	if c.Figure != nil {
		pic.pages = []*plots.Figure{c.Figure}
	}
	figs, err := out.render(pic)
	if err != nil {
		return nil, nil, err
	}
	page, err := htmlreport.CalibrationPage(calibrationPage(c)).HTML()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", htmlreport.CalibrateFileName, err)
	}
	files := append([]file{{"calibrated.toml", c.Calibrated}}, figs...)
	if written, err = out.write(append(files, file{htmlreport.CalibrateFileName, page})); err != nil {
		return written, nil, err
	}
	return written, nil, out.removeStale([]string{pic.stem}, written)
}

// ParseMachineMap reads tsim calibrate's --map, "MACHINE=TIER,...", into
// tier → machine (CalibrateOptions.Machines).
func ParseMachineMap(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	machines := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		m, t, ok := strings.Cut(strings.TrimSpace(kv), "=")
		m, t = strings.TrimSpace(m), strings.TrimSpace(t)
		if !ok || m == "" || t == "" {
			return nil, fmt.Errorf("%q is not MACHINE=TIER", kv)
		}
		if prev, dup := out[t]; dup {
			return nil, fmt.Errorf("tier %s mapped twice (%s and %s)", t, prev, m)
		}
		if prev, dup := machines[strings.ToLower(m)]; dup {
			return nil, fmt.Errorf("machine %s mapped twice (to %s and %s)", m, prev, t)
		}
		out[t], machines[strings.ToLower(m)] = m, t
	}
	return out, nil
}
