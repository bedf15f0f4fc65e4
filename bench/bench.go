package bench

import (
	"fmt"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// Result is the outcome of one benchmark run.
type Result struct {
	Model    string
	Requests uint64 // customers (mm1) or generated requests (the others)
	Events   uint64 // engine events executed
	// LoadS is the wall-clock seconds spent loading and resolving the
	// model (parsing its TOML, building each scenario's topology); 0 for
	// mm1, which is built in Go.
	LoadS float64
	// WallS is the wall-clock seconds of the simulation proper: model.Run
	// (or, for mm1, the engine's Run), loading excluded. A regression in the
	// engine or the model shows here, one in the loader in LoadS.
	WallS float64
	// MeanResponseS is the mean response time of completed requests in
	// simulated seconds, a sanity check against theory (mm1: 1/(μ−λ) =
	// 10 s; pipeline: N/X − Z = 6.5 s); of the first scenario when a
	// model has several.
	MeanResponseS float64

	// The whole runs (run:NAME, RunWhole) also write the output files.
	// OutputS is the wall-clock seconds of writing them (summary.json, the
	// CSV files and the pictures, as `tsim run` writes them, after the
	// simulation); OutputFiles and OutputBytes are how many and how large.
	// SimCPUS and OutputCPUS are the process's CPU seconds (user and
	// system, every core) while simulating and while writing; zero where
	// the system does not tell. The rest leave all of them zero.
	OutputS, SimCPUS, OutputCPUS float64
	OutputFiles                  int
	OutputBytes                  int64
}

// RequestsPerS returns requests per wall-clock second of simulation.
func (r Result) RequestsPerS() float64 { return float64(r.Requests) / r.WallS }

// EventsPerS returns engine events per wall-clock second of simulation.
func (r Result) EventsPerS() float64 { return float64(r.Events) / r.WallS }

// models lists the benchmarks in the order Models reports them: the two
// reference models first (bench/simpy and the team's desgo yardstick
// implement them too), then whole runs of loading and simulating longer or
// richer systems, so that a regression that only shows at length (the
// calendar growing with a long run) or in the .NET throttles is visible.
var models = []struct {
	name string
	run  func() (Result, error)
}{
	{"mm1", func() (Result, error) { return runMM1(mm1Customers, 1), nil }},
	{"pipeline", func() (Result, error) { return runPipeline(1) }},
	{"pipeline-10h", func() (Result, error) {
		return RunExperiment("pipeline-10h", []byte("topology = \"pipeline\"\nduration = \"10h\"\n"), nil)
	}},
	{"crack-throttling", func() (Result, error) {
		return RunExperiment("crack-throttling", []byte("topology = \"crack-throttling\"\n"), nil)
	}},
	{"run:pipeline", func() (Result, error) { return runWhole(wholeRuns[0].name, wholeRuns[0].text) }},
	{"run:crack-throttling", func() (Result, error) { return runWhole(wholeRuns[1].name, wholeRuns[1].text) }},
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

// RunExperiment loads an experiment file (name is its name in messages,
// readFile as for format.LoadExperiment) and runs each of its scenarios
// once, with the experiment's seed, as the first replication of `tsim run`
// would; it measures the loading (LoadS) and the simulation (WallS)
// apart and sums requests and events over the scenarios.
func RunExperiment(name string, data []byte, readFile func(string) ([]byte, error)) (Result, error) {
	r := Result{Model: name}
	start := time.Now()
	x, err := format.LoadExperiment(name, data, readFile)
	r.LoadS += time.Since(start).Seconds()
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	for i := range x.NumScenarios() {
		start := time.Now()
		sc, err := x.Scenario(i)
		r.LoadS += time.Since(start).Seconds()
		if err != nil {
			return Result{}, fmt.Errorf("bench: %w", err)
		}
		start = time.Now()
		res, err := simmode.Run(&sc.Topology, model.Options{Seed: x.Seed})
		r.WallS += time.Since(start).Seconds()
		if err != nil {
			return Result{}, fmt.Errorf("bench: %s: scenario %d: %w", name, i, err)
		}
		r.Requests += uint64(res.Requests.Generated)
		r.Events += res.Events
		if i == 0 {
			r.MeanResponseS = res.Latency.Mean
		}
	}
	return r, nil
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

// pipelineText is the reference pipeline, the named topology "pipeline"
// (topologies/pipeline.toml, which experiments/pipeline.toml uses too): 100
// users, think exp(1s); a front end with 96 threads calls the back end
// through 2 connections; the back end uses a CPU for exp(50ms), then waits
// exp(100ms); users give up after 20 s; 3,600 simulated seconds.
const pipelineText = `topology = "pipeline"`

// runPipeline runs the reference pipeline once.
func runPipeline(seed uint64) (Result, error) {
	start := time.Now()
	x, err := format.LoadExperiment("pipeline", []byte(pipelineText), nil)
	if err != nil {
		return Result{}, fmt.Errorf("bench: pipeline: %w", err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		return Result{}, fmt.Errorf("bench: pipeline: %w", err)
	}
	load := time.Since(start).Seconds()
	start = time.Now()
	res, err := simmode.Run(&sc.Topology, model.Options{Seed: seed})
	wall := time.Since(start).Seconds()
	if err != nil {
		return Result{}, fmt.Errorf("bench: pipeline: %w", err)
	}
	return Result{
		Model:         "pipeline",
		Requests:      uint64(res.Requests.Generated),
		Events:        res.Events,
		LoadS:         load,
		WallS:         wall,
		MeanResponseS: res.Latency.Mean,
	}, nil
}
