// Package fit searches the inputs of an experiment that best match target
// figures, and then predicts the figures it was not given.
//
// A fit specification (a small TOML file, see ParseSpec) names free inputs
// — key paths of the experiment format with a range — and targets: a
// metric of a tier, a call or the clients, in a variant, with the value a
// document or a measurement gives and its tolerance. Fit simulates the
// experiment with the same seeds at every evaluation (common random
// numbers, so that two candidate inputs differ by their effect and not by
// their luck), minimises the targets' squared residuals in tolerances with
// gonum's Nelder–Mead (gonum.org/v1/gonum/optimize) from several starts
// within a bounded number of evaluations, and then, from finite
// differences at the optimum, gives each input a 95% interval and its
// sensitivity, every target its residual, and every
// target the fit did not use (use = "predict", or held out) a prediction
// with a 95% interval and a verdict. What a model predicts after it was
// fitted is what makes it worth trusting; a figure that set an input is a
// check of consistency, not of the model.
//
// The fitted experiment is the experiment's own text with the fitted
// values written in, checked to compile to the same scenarios.
//
// fit knows the experiment format, the model's runs and their results; it
// must not import the root package or cmd/tsim, and draws through plots.
package fit
