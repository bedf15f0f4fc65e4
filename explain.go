package tsim

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/plots"
)

// ExplainOptions say how Explain simulates.
type ExplainOptions struct {
	// Seed, when not nil, replaces the experiment's seed.
	Seed *uint64
}

// Explanation is what Explain found; see analysis.Explanation. Its
// WriteText prints what tsim explain prints.
type Explanation struct {
	*analysis.Explanation
}

// Explain bounds every throttle of e by the operational laws, simulates
// each variant once, says where the response time went and which limit
// binds, and proposes the smallest change that moves the bottleneck, and
// what binds next.
func Explain(ctx context.Context, e *Experiment, opt ExplainOptions) (*Explanation, error) {
	x, err := analysis.Explain(ctx, e.l.X, analysis.ExplainOptions{Path: e.Path(), Seed: opt.Seed})
	if err != nil {
		return nil, err
	}
	return &Explanation{x}, nil
}

// WriteFiles writes breakdown.png (in out's formats), where the response
// time of each variant's completed requests went, and explain.html, the
// text of WriteText and each variant's run as a run's report.html shows
// it, into out; warnings say why a picture was not drawn.
func (x *Explanation) WriteFiles(out *Output) (written, warnings []string, err error) {
	var bars []plots.BreakdownBar
	for _, v := range x.Variants {
		bars = append(bars, plots.BreakdownBar{Label: v.Name, Breakdown: v.Run.Breakdown})
	}
	pic := picture{stem: "breakdown"}
	fig, err := plots.Breakdown(x.Name+": where the response time of a completed request went", bars)
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("breakdown.png not drawn: %v", err))
	} else {
		pic.pages = []*plots.Figure{fig}
	}
	if written, err = writePictures(out, pic); err != nil {
		return nil, warnings, err
	}
	page, err := x.page()
	if err == nil {
		err = out.WriteFile(ExplainPage, page)
	}
	if err != nil {
		return written, warnings, fmt.Errorf("%s: %w", ExplainPage, err)
	}
	return append(written, ExplainPage), warnings, nil
}

// ExplainPage is the page tsim explain writes beside a run's report.html.
const ExplainPage = "explain.html"

// page renders explain.html: the diagnosis as WriteText prints it, then
// each variant's simulation as report.html shows a run.
func (x *Explanation) page() ([]byte, error) {
	var text bytes.Buffer
	if err := x.WriteText(&text); err != nil {
		return nil, err
	}
	var runs []htmlreport.NamedRun
	for _, v := range x.Variants {
		runs = append(runs, htmlreport.NamedRun{Variant: v.Name, Run: v.Run})
	}
	pg := htmlreport.Experiment(htmlreport.RunsExperiment(x.Name, x.Path, x.Seed, runs), htmlreport.Options{})
	pg.Title = "tsim explain: " + x.Name
	pg.Insert("", &htmlreport.Section{ID: "diagnosis", Title: "Diagnosis", Blocks: []htmlreport.Block{{Pre: text.String()}}})
	return pg.HTML()
}
