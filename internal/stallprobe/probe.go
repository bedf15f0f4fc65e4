// Package stallprobe measures what a busy machine adds to a real run while
// it runs, from inside the same process: how late a short timer fires, how
// long the process stalls and how those stalls bunch, and what a loopback
// HTTP round trip costs. Tests that run tsim for real (realmode's, and
// tsim validate's in cmd/tsim) judge time only on runs the probe saw
// undisturbed; this package is their one probe and their one rule.
//
// Both measures grow with the load of the machine and with the run's own:
// a process that keeps the CPUs busy loses the scheduler's preference for
// tasks that wake from sleep, so a probe run alone on a busy machine sees
// much less than one run beside a real run (measured with two busy loops
// on 2 cores: 0.25 ms of mean timer lateness alone, 0.4–1.4 ms beside a
// run, with stalls of 10–100 ms).
//
// Package stallprobe imports nothing of tsim; only tests import it.
package stallprobe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"
)

// Noise is what the probe measured.
type Noise struct {
	Late    time.Duration // mean lateness of a 1 ms timer (real time)
	Base    time.Duration // its median: the timer's granularity, without stalls
	MaxLate time.Duration // the longest: the longest stall
	// Stalled is the time the probe's timer spent late by more than 1 ms
	// beyond Base: the process, or the probe's goroutine, did not run.
	Stalled time.Duration
	// Burst is the largest share of any window of BurstWindow spent
	// stalled: stalls bunched together starve a queue for long enough to
	// build a backlog that outlives them, where the same stalls spread
	// over the run do not.
	Burst   float64
	RTT     time.Duration // mean loopback HTTP round trip (real time)
	Span    time.Duration // how long the probe ran
	Wakeups int           // timer samples
	Calls   int           // HTTP samples
	CPU     float64       // cores this process used meanwhile (0 where not measured)
}

// The rule: a run during which the probe saw the process stalled for
// longer than MaxStall, for more than MaxStalled of the run, or for more
// than MaxBurst of any BurstWindow of it, while the run itself used less
// than BusySelf of a core (the stalls came from elsewhere), is disturbed:
// nothing fine can be judged on time from it. (Measured: 100–1000 ms
// stalls at a load average of 8 doubled an M/M/4's mean latency and put
// timeouts where there are none; an M/M/4 at ρ = 0.75 whose probe found
// 68% of a quarter-second stalled came out 50% slow, while spread-out
// stalls of the same total cost it 0–10%; at a load average of 16, a WCF
// throttle case whose probe found 46% of a quarter-second stalled, 12% of
// the run, came out with p50 +37% and its queue +25%, so a burst of 30%
// already disturbs.)
const (
	MaxStall    = 50 * time.Millisecond
	MaxStalled  = 0.25
	MaxBurst    = 0.3
	BusySelf    = 0.5
	BurstWindow = 250 * time.Millisecond
)

// probeSleep is what the probe's timer sleeps at a time; it makes a round
// trip every probeEvery. Together they cost a run well under 1% of a core.
const (
	probeSleep = time.Millisecond
	probeEvery = 10 * time.Millisecond
)

// StalledFrac is the fraction of the probe's time spent stalled.
func (n Noise) StalledFrac() float64 {
	if n.Span <= 0 {
		return 0
	}
	return float64(n.Stalled) / float64(n.Span)
}

func (n Noise) String() string {
	return fmt.Sprintf("timer late %v (median %v, max %v, stalled %.1f%% of %v, %.0f%% of the worst %v, %d samples), HTTP round trip %v (%d samples), %.2f cores used",
		n.Late.Round(time.Microsecond), n.Base.Round(time.Microsecond), n.MaxLate.Round(time.Microsecond),
		100*n.StalledFrac(), n.Span.Round(time.Millisecond), 100*n.Burst, BurstWindow, n.Wakeups, n.RTT.Round(time.Microsecond), n.Calls, n.CPU)
}

// Disturbed says why nothing can be judged on time from a run with this
// noise, or "": see the rule above; maxStall replaces MaxStall for a
// caller whose spans tolerate more or less, and self is the cores the run
// itself used (a run this busy is not excused by its own stalls).
func (n Noise) Disturbed(self float64, maxStall time.Duration) string {
	if self > BusySelf {
		return ""
	}
	if n.MaxLate > maxStall || n.StalledFrac() > MaxStalled || n.Burst > MaxBurst {
		return fmt.Sprintf("the process stalled up to %v, %.0f%% of the run, %.0f%% of its worst %v, while the run used %.2f cores",
			n.MaxLate.Round(time.Millisecond), 100*n.StalledFrac(), 100*n.Burst, BurstWindow, self)
	}
	return ""
}

// Start starts measuring; the function it returns stops the probe and
// returns what it measured.
func Start() func() Noise {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Length", "1")
		_, _ = w.Write([]byte{'.'})
	}))
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	var late, rtt, at []time.Duration
	var wg sync.WaitGroup
	wg.Add(2)
	begin, cpu0 := time.Now(), CPUTime()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			t0 := time.Now()
			time.Sleep(probeSleep)
			late = append(late, time.Since(t0)-probeSleep)
			at = append(at, time.Since(begin))
		}
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			t0 := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				rtt = append(rtt, time.Since(t0))
			}
			time.Sleep(probeEvery)
		}
	}()
	return func() Noise {
		cancel()
		wg.Wait()
		n := Noise{Span: time.Since(begin), Wakeups: len(late), Calls: len(rtt), Late: Mean(late), RTT: Mean(rtt)}
		if cpu := CPUTime(); cpu > 0 && n.Span > 0 {
			n.CPU = float64(cpu-cpu0) / float64(n.Span)
		}
		tr.CloseIdleConnections()
		srv.Close()
		n.Base = median(late)
		windows := make([]time.Duration, n.Span/BurstWindow+1)
		for i, l := range late {
			n.MaxLate = max(n.MaxLate, l)
			if x := l - n.Base; x > time.Millisecond {
				n.Stalled += x
				windows[at[i]/BurstWindow] += x
			}
		}
		for _, w := range windows {
			n.Burst = max(n.Burst, float64(w)/float64(BurstWindow))
		}
		return n
	}
}

// Mean is the mean of xs, 0 for none.
func Mean(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range xs {
		sum += x
	}
	return sum / time.Duration(len(xs))
}

func median(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}
