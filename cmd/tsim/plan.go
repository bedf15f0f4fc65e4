package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"

	"github.com/tsim-dev/tsim"
)

var cmdPlan = &command{
	Name:      "plan",
	UsageLine: "FILE --goal GOAL (--vary KEY=LO..HI... | --find users|rate [--max-load L]) [--maximize goodput|throughput] [--users N | --rate R] [--variant NAME] [--set KEY=VALUE]... [--reps N] [--seed N] [--search auto|bisect|grid] [--duration D] [-o DIR] [--format png,svg,pdf] [--wide] [--quiet]",
	Short:     "find the smallest settings that meet a goal, or the most load a setting holds",
	Long:      helpText("plan"),
	Run:       runPlan,
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runPlan(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	wide(fs)
	goalFlag := fs.String("goal", "", "")
	var varies, sets multiFlag
	fs.Var(&varies, "vary", "")
	fs.Var(&sets, "set", "")
	find := fs.String("find", "", "")
	users := fs.Int("users", 0, "")
	rate := fs.Float64("rate", 0, "")
	variant := fs.String("variant", "", "")
	reps := fs.Int("reps", 0, "")
	seed := fs.Uint64("seed", 0, "")
	search := fs.String("search", "auto", "")
	duration := fs.String("duration", "", "")
	outDir := fs.String("o", "out", "")
	quiet := fs.Bool("quiet", false, "")
	maxLoad := fs.Float64("max-load", 0, "")
	maximize := fs.String("maximize", "", "")
	formats := pictureFormats(fs)
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	switch {
	case len(files) == 0:
		return c.usageError(e, "no experiment file given")
	case len(files) > 1:
		return c.usageError(e, "one experiment file at a time, got %d", len(files))
	case *goalFlag == "" && *maximize == "":
		return c.usageError(e, "no --goal given (such as --goal \"p99<1s,timeouts<0.1%%\")")
	case *maximize != "" && *maximize != "goodput" && *maximize != "throughput":
		return c.usageError(e, "--maximize must be goodput or throughput, got %q", *maximize)
	case *maximize != "" && (len(varies) != 1 || *find != ""):
		return c.usageError(e, "--maximize searches one setting: give one --vary KEY=LO..HI (and no --find)")
	case set["max-load"] && (*find == "" || !(*maxLoad > 0) || math.IsInf(*maxLoad, 0)):
		return c.usageError(e, "--max-load bounds --find: give it with --find, a number > 0, got %v", *maxLoad)
	case len(varies) == 0 && *find == "":
		return c.usageError(e, "nothing to search: give --vary KEY=LO..HI, or --find users (or rate)")
	case len(varies) > 0 && *find != "":
		return c.usageError(e, "--find searches the load of one configuration: give it with --variant and --set, not --vary")
	case *find != "" && *find != "users" && *find != "rate":
		return c.usageError(e, "--find must be users or rate, got %q", *find)
	case set["users"] && set["rate"]:
		return c.usageError(e, "--users and --rate: give one (users for closed loads, rate for open ones)")
	case set["users"] && *users < 1:
		return c.usageError(e, "--users must be at least 1, got %d", *users)
	case set["rate"] && !(*rate > 0):
		return c.usageError(e, "--rate must be > 0, got %v", *rate)
	case *find == "users" && set["users"], *find == "rate" && set["rate"]:
		return c.usageError(e, "--find %s searches the load: do not also fix it with --%s", *find, *find)
	case set["reps"] && tsim.CheckReplications(*reps) != nil:
		return c.usageError(e, "--reps %v", tsim.CheckReplications(*reps))
	case *search != "auto" && *search != "bisect" && *search != "grid":
		return c.usageError(e, "--search must be auto, bisect or grid, got %q", *search)
	case tsim.CheckFormats(*formats) != nil:
		return c.usageError(e, "--format: %v", tsim.CheckFormats(*formats))
	}
	opt := tsim.PlanOptions{Find: *find, Users: *users, Rate: *rate, Variant: *variant, Reps: *reps, Duration: *duration,
		Search: *search, Workers: numWorkers(), MaxLoad: *maxLoad, Maximize: *maximize,
		Warn: func(s string) { c.errorf(e, "warning: %s", s) }}
	var err error
	if *goalFlag != "" {
		if opt.Goal, err = tsim.ParseGoal(*goalFlag); err != nil {
			return c.usageError(e, "%v", err)
		}
	}
	if opt.Vary, err = tsim.ParseVaries(varies); err != nil {
		return c.usageError(e, "%v", err)
	}
	if *search == "bisect" && !tsim.CanBisect(opt.Vary) {
		return c.usageError(e, "--search bisect needs one --vary with an integer range (KEY=LO..HI)")
	}
	if opt.Set, err = tsim.ParseSets(sets); err != nil {
		return c.usageError(e, "%v", err)
	}
	x, err := load(fs, files[0])
	if err != nil {
		return c.fail(e, err)
	}
	if set["seed"] {
		opt.Seed = seed
	}
	r, err := tsim.Plan(ctx, x, opt)
	if r == nil {
		return c.fail(e, err)
	}
	// Interrupted, r holds the points evaluated: they are printed.
	var out bytes.Buffer
	if werr := r.WriteText(tables(fs, &out, e.stdout)); werr != nil {
		return c.fail(e, werr)
	}
	if err != nil {
		e.writeOut(out.Bytes())
		if errors.Is(err, tsim.ErrInterrupted) {
			c.errorf(e, "interrupted; the points that finished are above")
		} else {
			c.errorf(e, "%v", err)
		}
		return exitFailure
	}
	if st := c.writeFiles(e, &out, *outDir, x.Stem(), *formats, r.WriteFiles, *quiet); st != exitOK {
		return st
	}
	e.writeOut(out.Bytes())
	if !r.Found {
		return exitFailure
	}
	return exitOK
}
