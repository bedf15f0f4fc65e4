package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tsim-dev/tsim"
	"github.com/tsim-dev/tsim/internal/termui"
	"github.com/tsim-dev/tsim/report"
)

// A command is one tsim subcommand.
type command struct {
	Name      string
	UsageLine string // the arguments after the name, for "usage: tsim NAME ..."
	Short     string // one line for the command list
	Long      string // the text of "tsim help NAME"

	// Run runs the command on the arguments after its name and returns the
	// exit status.
	Run func(ctx context.Context, c *command, e *env, args []string) int
}

// env is where a command writes. Results may be printed by one goroutine
// while another reports a problem, so every write holds mu: a line is never
// split by another. Once closed (a command stopped after a signal), it
// writes nothing more.
type env struct {
	stdout, stderr io.Writer
	mu             sync.Mutex
	closed         bool
}

// writeOut writes b to standard output in one piece.
func (e *env) writeOut(b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.stdout.Write(b)
	}
}

// closeWith writes a last message to standard error, and nothing after.
func (e *env) closeWith(msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		io.WriteString(e.stderr, msg)
	}
	e.closed = true
}

// out prints to standard output.
func (c *command) out(e *env, format string, args ...any) {
	e.writeOut(fmt.Appendf(nil, format, args...))
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // invalid input or a failed run
	exitUsage   = 2 // unknown command or flag, missing argument
)

// commands is the ordered command list; help prints it in this order.
var commands []*command

func init() {
	commands = []*command{cmdRun, cmdExplain, cmdPlan, cmdValidate, cmdMerge, cmdCheck, cmdConfig, cmdCalibrate, cmdFit, cmdDiff, cmdBench, cmdVersion, cmdHelp}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Main runs tsim with args (without the program name) and returns the exit
// status. The first SIGINT or SIGTERM cancels ctx, which a long run notices
// between replications; a second one ends the process as usual.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	e := &env{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	case "-version", "--version", "-v":
		name = "version"
	}
	c := lookup(name)
	if c == nil {
		if strings.HasPrefix(name, "-") {
			fmt.Fprintf(stderr, "tsim: flag %s before the command; flags go after it, as in 'tsim run FILE %s'\nRun 'tsim help' for usage.\n", name, name)
		} else {
			fmt.Fprintf(stderr, "tsim %s: unknown command\nRun 'tsim help' for usage.\n", name)
		}
		return exitUsage
	}
	return c.runSafely(ctx, e, args[1:])
}

// graceAfterSignal is how long a command has, after the first Ctrl-C or
// SIGTERM, to print what it finished and stop by itself.
const graceAfterSignal = 800 * time.Millisecond

// runSafely runs c and turns a panic, which is a bug in tsim, into a
// message and exit status 1 instead of a runtime dump. Every command
// honours the first Ctrl-C or SIGTERM within a second: it stops and says
// what it finished by itself, or, when it has not returned within
// graceAfterSignal, tsim says it was interrupted and exits 1, writing
// nothing more.
func (c *command) runSafely(ctx context.Context, e *env, args []string) int {
	done := make(chan int, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				c.errorf(e, "internal error: %v\n(this is a bug in tsim; please report it with the command and files that caused it)", r)
				done <- exitFailure
			}
		}()
		done <- c.Run(ctx, c, e, args)
	}()
	select {
	case st := <-done:
		return st
	case <-ctx.Done():
	}
	t := time.NewTimer(graceAfterSignal)
	defer t.Stop()
	select {
	case st := <-done:
		return st
	case <-t.C:
		e.closeWith(fmt.Sprintf("tsim %s: interrupted; stopped before it finished\n", c.Name))
		return exitFailure
	}
}

// errorf prints one message line prefixed with the command's name. A
// multi-line message (several load errors) gets the prefix on every line.
func (c *command) errorf(e *env, format string, args ...any) {
	msg := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
	var b strings.Builder
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintf(&b, "tsim %s: %s\n", c.Name, clip(line))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		io.WriteString(e.stderr, b.String())
	}
}

// fail prints err and returns the failure status.
func (c *command) fail(e *env, err error) int {
	c.errorf(e, "%v", err)
	return exitFailure
}

// maxLine is the longest message line tsim prints: a longer one quotes
// too much of what it was given (a flag's value, a line of a file), and
// loses its middle.
const maxLine = 512

// clip cuts a line longer than maxLine in its middle.
func clip(line string) string {
	if len(line) <= maxLine {
		return line
	}
	head, tail := line[:maxLine/2], line[len(line)-maxLine/3:]
	return strings.ToValidUTF8(head, "") + " … " + strings.ToValidUTF8(tail, "")
}

// usageError prints a message and the command's usage line, and returns
// the usage exit status.
func (c *command) usageError(e *env, format string, args ...any) int {
	c.errorf(e, format, args...)
	fmt.Fprintf(e.stderr, "usage: tsim %s %s\nRun 'tsim help %s' for details.\n", c.Name, c.UsageLine, c.Name)
	return exitUsage
}

// flagSet returns an empty flag set that reports errors to the caller only.
func (c *command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("tsim "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args with fs, allowing flags before, between and after
// the positional arguments (as in "tsim run a.toml -o out b.toml --seed 3");
// "--" ends the flags. It returns the positional arguments, or a non-zero
// exit status after printing the problem (0 with help requested prints the
// long help).
func (c *command) parseFlags(e *env, fs *flag.FlagSet, args []string) (pos []string, status int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(e.stdout, "usage: tsim %s %s\n\n%s", c.Name, c.UsageLine, c.Long)
				return nil, exitOK, false
			}
			return nil, c.usageError(e, "%v", err), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, true
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), 0, true
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

// allowOutside declares --allow-outside on a command that reads
// experiment files.
func allowOutside(fs *flag.FlagSet) { fs.Bool("allow-outside", false, "") }

// pictureFormats declares --format on a command that draws pictures: the
// formats they are written in, a list of png, svg and pdf.
func pictureFormats(fs *flag.FlagSet) *string { return fs.String("format", "png", "") }

// load loads an experiment file as the flags ask: files named in it stay
// inside its folder unless --allow-outside.
func load(fs *flag.FlagSet, path string) (*tsim.Experiment, error) {
	return tsim.LoadFile(path, loadOptions(fs))
}

// loadAll loads every file before anything runs (a mistake in the last
// file should not wait for the first to finish), printing every problem;
// ok is false when a file did not load.
func (c *command) loadAll(e *env, fs *flag.FlagSet, files []string) (xs []*tsim.Experiment, ok bool) {
	ok = true
	for _, f := range files {
		x, err := load(fs, f)
		if err != nil {
			c.errorf(e, "%v", err)
			ok = false
		}
		xs = append(xs, x)
	}
	return xs, ok
}

// loadOptions are the reading rules the flags ask for.
func loadOptions(fs *flag.FlagSet) tsim.LoadOptions {
	var o tsim.LoadOptions
	if f := fs.Lookup("allow-outside"); f != nil {
		o.AllowOutside = f.Value.String() == "true"
	}
	return o
}

// stem is a file's name without its directory and extension.
func stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// wide declares --wide: tables as wide as they are, on a terminal too.
func wide(fs *flag.FlagSet) { fs.Bool("wide", false, "") }

// tables is w for the tables a command prints: on a terminal they fit its
// width (report.Table wraps a wide table into parts) unless --wide; into a
// file or a pipe they are printed whole, as wide as they are, so that what
// a script reads does not depend on a window's size.
func tables(fs *flag.FlagSet, w, stdout io.Writer) io.Writer {
	if f := fs.Lookup("wide"); f != nil && f.Value.String() == "true" {
		return w
	}
	return report.WithWidth(w, termui.Width(stdout))
}
