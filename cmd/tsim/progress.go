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
// progressDelay, shows them as a bar on a terminal.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	done  int
	desc  string
	bar   *progressbar.ProgressBar
	timer *time.Timer
}

// newProgress returns a progress for total replications, drawn on w if
// show; otherwise it only counts.
func newProgress(w io.Writer, total int, show bool) *progress {
	p := &progress{w: w, total: total}
	if show {
		p.timer = time.AfterFunc(progressDelay, p.start)
	}
	return p
}

func (p *progress) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer == nil { // finished meanwhile
		return
	}
	p.bar = progressbar.NewOptions(p.total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	p.bar.Set(p.done)
}

// setTotal sets the number of replications, before any finishes.
func (p *progress) setTotal(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = n
}

// describe names what is running now (the experiment).
func (p *progress) describe(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.desc = s
	if p.bar != nil {
		p.bar.Describe(s)
	}
}

// add counts one finished replication.
func (p *progress) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.bar != nil {
		p.bar.Set(p.done)
	}
}

// finish removes the bar, so that what follows starts on a clean line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
		p.bar = nil
	}
}
