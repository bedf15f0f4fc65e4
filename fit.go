package tsim

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/tsim-dev/tsim/fit"
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
)

// FitSpec is a fit specification: free inputs of an experiment with
// their ranges, and target figures; see fit.ParseSpec for its format.
type FitSpec = fit.Spec

// FitOptions adjust a fit; see fit.Options.
type FitOptions = fit.Options

// FitResult is what Fit found; see fit.Result. Its WriteText prints what
// tsim fit prints, Figure draws fit.png, and Experiment is the fitted
// experiment's TOML.
type FitResult = fit.Result

// LoadFit reads the fit specification at path and the experiment it
// fits: experiment if not "", else the file its experiment key names,
// relative to the specification. Each is checked against the other; every
// problem names its file and line.
func LoadFit(path, experiment string) (*FitSpec, *Experiment, error) {
	data, err := input.ReadRegular(path, format.MaxExperimentBytes, "fit specification")
	if err != nil {
		return nil, nil, err
	}
	s, err := fit.ParseSpec(filepath.ToSlash(path), data)
	if err != nil {
		return nil, nil, err
	}
	if experiment == "" {
		if s.Experiment == "" {
			return nil, nil, fmt.Errorf("%s: no experiment: give its experiment key or --experiment", path)
		}
		experiment = filepath.Join(filepath.Dir(path), filepath.FromSlash(s.Experiment))
	}
	e, err := Load(experiment)
	if err != nil {
		return nil, nil, err
	}
	if err := s.Check(e.x); err != nil {
		return nil, nil, err
	}
	return s, e, nil
}

// Fit searches the free inputs of e that best match s's targets by
// simulating e with the same seeds at every evaluation, and predicts the
// targets it did not use (use = "predict", or opt.HoldOut) with 95%
// intervals. s must have been loaded against e (LoadFit). When ctx is
// cancelled the runs under way stop and Fit returns an error wrapping
// ctx.Err().
func Fit(ctx context.Context, e *Experiment, s *FitSpec, opt FitOptions) (*FitResult, error) {
	if opt.ReadFile == nil {
		opt.ReadFile = func(name string) ([]byte, error) {
			for _, f := range e.sources[1:] {
				if f.Name == name {
					return []byte(f.Content), nil
				}
			}
			return nil, fmt.Errorf("%s: not read with the experiment", name)
		}
	}
	return fit.Fit(ctx, e.x, []byte(e.sources[0].Content), s, opt)
}
