package main

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

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress counts finished replications and, once a run has lasted
// progressDelay, shows them as a bar on w, if show.
type progress struct {
	mu          sync.Mutex
	w           io.Writer
	show        bool
	start       time.Time
	total, done int
	desc        string
	bar         *progressbar.ProgressBar
}

func newProgress(w io.Writer, show bool) *progress {
	return &progress{w: w, show: show, start: time.Now()}
}

// setTotal sets the number of replications, before any finishes.
func (p *progress) setTotal(n int) { p.update(func() { p.total = n }) }

// describe names what is running now (the experiment).
func (p *progress) describe(s string) { p.update(func() { p.desc = s }) }

// add counts one finished replication.
func (p *progress) add() { p.update(func() { p.done++ }) }

// update changes the counts and, past progressDelay, draws them.
func (p *progress) update(f func()) {
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

// finish removes the bar, so that what follows starts on a clean line;
// the next replication may draw it again.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
		p.bar = nil
	}
}
