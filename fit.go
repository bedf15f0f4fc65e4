package tsim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/tsim-dev/tsim/fit"
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/plots"
)

// FitSpec is a fit specification: free inputs of an experiment with
// their ranges, and target figures; see fit.ParseSpec for its format.
type FitSpec = fit.Spec

// FitOptions adjust a fit; see fit.Options.
type FitOptions = fit.Options

// FitResult is what Fit found; see fit.Result. Its WriteText prints what
// tsim fit prints, Figure draws fit.png, and Experiment is the fitted
// experiment's TOML; WriteFiles writes both.
type FitResult struct {
	*fit.Result
}

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
	named := experiment == ""
	if named {
		if s.Experiment == "" {
			return nil, nil, fmt.Errorf("%s: no experiment: give its experiment key or --experiment", path)
		}
		experiment = filepath.Join(filepath.Dir(path), filepath.FromSlash(s.Experiment))
	}
	e, err := Load(experiment)
	if err != nil {
		if named && errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: its experiment %q: %w", path, s.Experiment, err)
		}
		return nil, nil, err
	}
	if err := s.Check(e.l.X); err != nil {
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
		opt.ReadFile = e.l.ReadFile
	}
	r, err := fit.Fit(ctx, e.l.X, e.l.Data(), s, opt)
	if err != nil {
		return nil, err
	}
	return &FitResult{r}, nil
}

// WriteFiles writes fit.png (in out's formats), fit.html (the fitted
// inputs, the targets against the model and the sensitivities, with an
// interactive chart) and, when the fit produced one, fitted.toml into
// out, each whole or not at all; the pictures and the page are made
// before anything is written.
func (r *FitResult) WriteFiles(out *Output) (written, warnings []string, err error) {
	fig, err := r.Figure()
	if err != nil {
		return nil, nil, fmt.Errorf("fit.png: %v", err)
	}
	pic := picture{stem: "fit", pages: []*plots.Figure{fig}}
	files, err := out.render(pic)
	if err != nil {
		return nil, nil, err
	}
	page, err := htmlreport.FitPage(fitPage(r)).HTML()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", htmlreport.FitFileName, err)
	}
	files = append(files, file{htmlreport.FitFileName, page})
	if r.Experiment != nil {
		files = append(files, file{"fitted.toml", r.Experiment})
	}
	if written, err = out.write(files); err != nil {
		return written, nil, err
	}
	return written, nil, out.removeStale([]string{pic.stem}, written)
}
