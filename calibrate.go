package tsim

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tsim-dev/tsim/calibrate"
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

// WriteFiles writes calibrated.toml and calibration.png into out, each
// whole or not at all; the picture is drawn before anything is written.
func (c *Calibration) WriteFiles(out *Output) (written, warnings []string, err error) {
	var png bytes.Buffer
	if err := c.Figure.WritePNG(&png); err != nil {
		return nil, nil, fmt.Errorf("calibration.png: %v", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"calibrated.toml", c.Calibrated}, {"calibration.png", png.Bytes()}} {
		if err := out.WriteFile(f.name, f.data); err != nil {
			return written, nil, err
		}
		written = append(written, f.name)
	}
	return written, nil, nil
}
