// Package termui is what tsim's command line draws on a terminal: a
// progress bar of replications, and the terminal's width for the tables.
// It imports nothing of tsim.
package termui

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressDelay is how long a run goes before it shows a progress bar:
// short runs stay quiet.
const progressDelay = time.Second

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress counts finished replications and, once a run has lasted
// progressDelay, shows them as a bar on w, if show.
type Progress struct {
	mu          sync.Mutex
	w           io.Writer
	show        bool
	start       time.Time
	total, done int
	desc        string
	bar         *progressbar.ProgressBar
}

// NewProgress returns a Progress drawn on w if show; otherwise it only
// counts.
func NewProgress(w io.Writer, show bool) *Progress {
	return &Progress{w: w, show: show, start: time.Now()}
}

// SetTotal sets the number of replications, before any finishes.
func (p *Progress) SetTotal(n int) { p.update(func() { p.total = n }) }

// Describe names what is running now (the experiment).
func (p *Progress) Describe(s string) { p.update(func() { p.desc = s }) }

// Add counts one finished replication.
func (p *Progress) Add() { p.update(func() { p.done++ }) }

// update changes the counts and, past progressDelay, draws them.
func (p *Progress) update(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	if p.bar == nil && p.show && time.Since(p.start) >= progressDelay {
		p.bar = progressbar.NewOptions(p.total, progressbar.OptionSetWriter(p.w), progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("runs"), progressbar.OptionSetPredictTime(true), progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	if p.bar != nil {
		p.bar.Describe(p.desc)
		p.bar.Set(p.done)
	}
}

// Finish removes the bar, so that what follows starts on a clean line;
// the next replication may draw it again.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
		p.bar = nil
	}
}

// Width is the width of the terminal w is, or 0 when it is not one.
func Width(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}
