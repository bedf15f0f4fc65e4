package realmode

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// noise is what this machine added to a real run while it ran, measured in
// the same process by a probe running beside it: how late a short timer
// fires, and what a loopback HTTP round trip costs. Both grow with the
// load of the machine and with the run's own: a process that keeps the
// CPUs busy loses the scheduler's preference for tasks that wake from
// sleep, so a probe run alone on a busy machine sees much less than one
// run beside a real run (measured with two busy loops on 2 cores: 0.25 ms
// of mean timer lateness alone, 0.4–1.4 ms beside a run, with stalls of
// 10–100 ms).
type noise struct {
	Late    time.Duration // mean lateness of a 1 ms timer (real time)
	Base    time.Duration // its median: the timer's granularity, without stalls
	MaxLate time.Duration // the longest: the longest stall
	// Stalled is the time the probe's timer spent late by more than 1 ms
	// beyond Base: the process, or the probe's goroutine, did not run.
	Stalled time.Duration
	// Burst is the largest share of any window of burstWindow spent
	// stalled: stalls bunched together starve a queue for long enough to
	// build a backlog that outlives them, where the same stalls spread
	// over the run do not.
	Burst   float64
	RTT     time.Duration // mean loopback HTTP round trip (real time)
	Span    time.Duration // how long the probe ran
	Wakeups int           // timer samples
	Calls   int           // HTTP samples
}

// stalledFrac is the fraction of the probe's time spent stalled.
func (n noise) stalledFrac() float64 {
	if n.Span <= 0 {
		return 0
	}
	return float64(n.Stalled) / float64(n.Span)
}

func (n noise) String() string {
	return fmt.Sprintf("timer late %v (median %v, max %v, stalled %.1f%% of %v, %.0f%% of the worst %v, %d samples), HTTP round trip %v (%d samples)",
		n.Late.Round(time.Microsecond), n.Base.Round(time.Microsecond), n.MaxLate.Round(time.Microsecond),
		100*n.stalledFrac(), n.Span.Round(time.Millisecond), 100*n.Burst, burstWindow, n.Wakeups, n.RTT.Round(time.Microsecond), n.Calls)
}

// probeSleep is what the probe's timer sleeps at a time; it makes a round
// trip every probeEvery. Together they cost a run well under 1% of a core.
const (
	burstWindow = 250 * time.Millisecond
	probeSleep  = time.Millisecond
	probeEvery  = 10 * time.Millisecond
)

// startProbe starts measuring the machine's noise; the function it returns
// stops the probe and returns what it measured.
func startProbe() func() noise {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Length", "1")
		_, _ = w.Write(replyBody)
	}))
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	var late, rtt, at []time.Duration
	var wg sync.WaitGroup
	wg.Add(2)
	begin := time.Now()
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
			resp, err := client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				rtt = append(rtt, time.Since(t0))
			}
			time.Sleep(probeEvery)
		}
	}()
	return func() noise {
		cancel()
		wg.Wait()
		tr.CloseIdleConnections()
		srv.Close()
		n := noise{Span: time.Since(begin), Wakeups: len(late), Calls: len(rtt), Late: mean(late), Base: median(late), RTT: mean(rtt)}
		windows := make([]time.Duration, n.Span/burstWindow+1)
		for i, l := range late {
			n.MaxLate = max(n.MaxLate, l)
			if x := l - n.Base; x > time.Millisecond {
				n.Stalled += x
				windows[at[i]/burstWindow] += x
			}
		}
		for _, w := range windows {
			n.Burst = max(n.Burst, float64(w)/float64(burstWindow))
		}
		return n
	}
}

func mean(xs []time.Duration) time.Duration {
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
	xs = append([]time.Duration(nil), xs...)
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	return xs[len(xs)/2]
}

// withNoise returns a copy of top that models what the machine added to a
// real run at the given time scale, in simulated time:
//
//   - every call (the load's included) is one real HTTP round trip: the
//     measured mean round trip becomes network latency, half each way,
//     held on the connection as the real one is;
//   - every demand (CPU, wait) is one real timer, late by the measured
//     lateness less what the clock compensates (slack, its estimate at the
//     end of the run), and ends in a hand-off of what it held to another
//     goroutine, which must wake and run: one lateness more, and about
//     the work of a loopback round trip (a few wake-ups and switches; on a
//     starved process both grow: a WCF throttle at ρ = 0.75 came out 34%
//     slower than the noisy simulation without this term, at a measured
//     0.49 ms round trip, 2.5 times the quiet one);
//   - a think time is one timer.
//
// Simulated, it says what the real run should show on this machine at
// this moment, as the simulation of top says what an ideal machine would.
// (Measured: on a quiet machine the real run lies between the two, or
// within a few percent of them; under load the noisy simulation follows
// it within 10–20% where the plain one is 20–50% off.)
func withNoise(top *model.Topology, n noise, slack time.Duration, scale float64) *model.Topology {
	c := *top
	toSim := func(d time.Duration) time.Duration { return time.Duration(float64(d) / scale) }
	hop := toSim(n.RTT / 2)
	uncompensated := toSim(max(0, n.Late-slack))
	perDemand := uncompensated + toSim(n.Late+n.RTT)
	call := func(cl *model.Call) *model.Call {
		x := *cl
		x.Network.Latency += hop
		return &x
	}
	// lengthen adds perDemand to a demand whose effective mean is m (a CPU
	// step's is its demand times the tier's cost multiplier).
	lengthen := func(st *model.Step, m time.Duration) {
		if m > 0 {
			st.Demand = st.Demand.Scale(1 + float64(perDemand)/float64(m))
		}
	}
	c.Tiers = append([]model.Tier(nil), top.Tiers...)
	for i := range c.Tiers {
		t := &c.Tiers[i]
		t.Steps = append([]model.Step(nil), t.Steps...)
		for si := range t.Steps {
			st := &t.Steps[si]
			switch st.Kind {
			case model.StepCall:
				st.Call = call(st.Call)
			case model.StepCPU:
				m := st.Demand.Mean()
				if t.CostMultiplier > 0 {
					m = time.Duration(float64(m) * t.CostMultiplier)
				}
				lengthen(st, m)
			case model.StepWait:
				lengthen(st, st.Demand.Mean())
			}
		}
	}
	c.Load.Call = *call(&top.Load.Call)
	if c.Load.Kind == model.LoadClosed {
		if m := c.Load.Think.Mean(); m > 0 {
			c.Load.Think = c.Load.Think.Scale(1 + float64(uncompensated)/float64(m))
		}
	}
	return &c
}
