package bench

import (
	"fmt"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// Result is the outcome of one benchmark run.
type Result struct {
	Model    string
	Requests uint64  // customers (mm1) or generated requests (pipeline)
	Events   uint64  // engine events executed
	WallS    float64 // wall-clock seconds of the simulation proper (building the model excluded)
	// MeanResponseS is the mean response time of completed requests in
	// simulated seconds, a sanity check against theory (mm1: 1/(μ−λ) =
	// 10 s; pipeline: N/X − Z = 6.5 s).
	MeanResponseS float64
}

// RequestsPerS returns requests per wall-clock second.
func (r Result) RequestsPerS() float64 { return float64(r.Requests) / r.WallS }

// EventsPerS returns engine events per wall-clock second.
func (r Result) EventsPerS() float64 { return float64(r.Events) / r.WallS }

// models lists the benchmarks in the order Models reports them.
var models = []struct {
	name string
	run  func() (Result, error)
}{
	{"mm1", func() (Result, error) { return runMM1(mm1Customers, 1), nil }},
	{"pipeline", func() (Result, error) { return runPipeline(1) }},
}

// Models returns the names of the benchmark models.
func Models() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.name
	}
	return names
}

// Run runs the named benchmark once with seed 1 and measures it.
func Run(name string) (Result, error) {
	for _, m := range models {
		if m.name == name {
			return m.run()
		}
	}
	return Result{}, fmt.Errorf("bench: unknown model %q (have %v)", name, Models())
}

// ---------------------------------------------------------------------------
// mm1

const (
	mm1Lambda    = 0.9
	mm1Mu        = 1.0
	mm1Customers = 1_000_000
)

const (
	mm1Arrive int32 = iota
	mm1Depart
)

// mm1 is an M/M/1 FCFS queue on the bare engine. The customers present are
// just their arrival instants in a power-of-two ring, so an event allocates
// nothing once the ring has grown to the largest queue seen; the handler
// passes no argument, so nothing is boxed.
type mm1 struct {
	arrivals, services *sim.Stream
	ring               []sim.Time // arrival instants, FIFO; len is a power of two
	head, n            int
	done, target       uint64
	warm               uint64 // customers excluded from the mean
	respNS             int64  // Σ response times of counted customers, ns
}

func newMM1(e *sim.Engine, target, warm uint64) *mm1 {
	q := &mm1{
		arrivals: e.Stream("mm1/arrivals"),
		services: e.Stream("mm1/services"),
		ring:     make([]sim.Time, 1024),
		target:   target,
		warm:     warm,
	}
	q.scheduleArrival(e)
	return q
}

func (q *mm1) OnEvent(e *sim.Engine, kind int32, _ any) {
	if kind == mm1Arrive {
		q.onArrival(e)
	} else {
		q.onServiceDone(e)
	}
}

func (q *mm1) scheduleArrival(e *sim.Engine) {
	e.Schedule(sim.FromSeconds(q.arrivals.ExpFloat64()*(1/mm1Lambda)), sim.ClassArrival, q, mm1Arrive, nil)
}

func (q *mm1) startService(e *sim.Engine) {
	e.Schedule(sim.FromSeconds(q.services.ExpFloat64()*(1/mm1Mu)), sim.ClassCompletion, q, mm1Depart, nil)
}

func (q *mm1) onArrival(e *sim.Engine) {
	if q.n == len(q.ring) {
		q.grow()
	}
	q.ring[(q.head+q.n)&(len(q.ring)-1)] = e.Now()
	q.n++
	if q.n == 1 {
		q.startService(e)
	}
	q.scheduleArrival(e)
}

func (q *mm1) onServiceDone(e *sim.Engine) {
	arrived := q.ring[q.head]
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
	q.done++
	if q.done > q.warm {
		q.respNS += int64(e.Now() - arrived)
	}
	if q.done == q.target {
		e.Stop()
		return
	}
	if q.n > 0 {
		q.startService(e)
	}
}

func (q *mm1) grow() {
	nr := make([]sim.Time, 2*len(q.ring))
	for i := range q.n {
		nr[i] = q.ring[(q.head+i)&(len(q.ring)-1)]
	}
	q.ring, q.head = nr, 0
}

// meanResponseS is the mean response time of the counted customers.
func (q *mm1) meanResponseS() float64 {
	return float64(q.respNS) / 1e9 / float64(q.done-q.warm)
}

// runMM1 runs the M/M/1 model from empty until n customers complete.
func runMM1(n uint64, seed uint64) Result {
	e := sim.New(seed)
	q := newMM1(e, n, 0)
	start := time.Now()
	e.Run(sim.MaxTime)
	wall := time.Since(start).Seconds()
	return Result{Model: "mm1", Requests: q.done, Events: e.Events(), WallS: wall, MeanResponseS: q.meanResponseS()}
}

// ---------------------------------------------------------------------------
// pipeline

// pipelineTopology returns the reference pipeline, loaded from the named
// topology "pipeline" (topologies/pipeline.toml, which
// experiments/pipeline.toml uses too): 100 users, think exp(1s); a front
// end with 96 threads calls the back end through 2 connections; the back
// end uses a CPU for exp(50ms), then waits exp(100ms); users give up after
// 20 s; 3,600 simulated seconds.
func pipelineTopology() (*model.Topology, error) {
	x, err := format.LoadExperiment("pipeline", []byte(`topology = "pipeline"`), nil)
	if err != nil {
		return nil, err
	}
	sc, err := x.Scenario(0)
	if err != nil {
		return nil, err
	}
	return &sc.Topology, nil
}

// runPipeline runs the reference pipeline (20 s timeout, 3,600 s) once.
func runPipeline(seed uint64) (Result, error) {
	top, err := pipelineTopology()
	if err != nil {
		return Result{}, fmt.Errorf("bench: pipeline: %w", err)
	}
	start := time.Now()
	res, err := model.Run(top, model.Options{Seed: seed})
	wall := time.Since(start).Seconds()
	if err != nil {
		return Result{}, fmt.Errorf("bench: pipeline: %w", err)
	}
	return Result{
		Model:         "pipeline",
		Requests:      uint64(res.Requests.Generated),
		Events:        res.Events,
		WallS:         wall,
		MeanResponseS: res.Latency.Mean,
	}, nil
}
