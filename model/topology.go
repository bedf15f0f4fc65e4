package model

import (
	"time"

	"github.com/tsim-dev/tsim/sim"
)

// Topology is one system under one load, resolved and validated: every
// default filled in, every name turned into an index. Variants and sweep
// points of an experiment are each a Topology.
type Topology struct {
	Tiers []Tier
	Load  Load
	// Farms are the tiers deployed on several machines (farm.go); their
	// replicas are in Tiers.
	Farms []Farm

	Duration    time.Duration // simulated run length
	Warmup      time.Duration // statistics before this instant are discarded; <0 means automatic (MSER-5)
	SampleEvery time.Duration // time-series interval
	// Precision, if > 0, stops the run once the 95% confidence half-width
	// of the mean client latency (batch means) is at most this fraction of
	// the mean; Duration is then the longest it may run.
	Precision float64
}

// HostKind is how a tier is hosted, which decides its admission path and
// which thread pools a request uses.
type HostKind uint8

const (
	HostSelf          HostKind = iota // self-hosted process (console, Windows service): no admission, WCF on I/O threads
	HostASPNetClassic                 // IIS 6 / classic pipeline: ASP.NET RequestQueue (minFreeThreads)
	HostIISIntegrated                 // IIS 7+ integrated pipeline: MaxConcurrentRequestsPerCPU
	HostThreads                       // a thread-per-request server with an accept queue (Tomcat, Kestrel-like)
)

var hostNames = [...]string{"self", "aspnet-classic", "iis-integrated", "threads"}

func (h HostKind) String() string { return hostNames[h] }

// IsASPNet reports whether the host is ASP.NET (IIS classic or
// integrated pipeline): its requests pass ASP.NET's admission and take a
// worker thread and an HttpApplication instance, and a request is
// executing from its worker thread on (Tier.ExecStartsAt).
func (h HostKind) IsASPNet() bool { return h == HostASPNetClassic || h == HostIISIntegrated }

// Tier is one process: its CPU, thread pools, admission, WCF service
// behaviour and the operation it runs for each request.
type Tier struct {
	Name           string
	Host           HostKind
	Cores          int
	CPU            CPUDiscipline // how the cores serve CPU demands
	CostMultiplier float64       // multiplies every CPU demand (debug builds, tracing); 1 = none
	// DotNet is the process's .NET version ("3.5", "4.0", "core"), "" when
	// not .NET: it names the PerfMon counter objects (ASP.NET v2.0.50727
	// or v4.0.30319, ServiceModelService 3.0.0.0 or 4.0.0.0) and picks the
	// HttpApplication pool's rules (AppPool).
	DotNet string

	Worker Pool // ASP.NET / CLR worker threads
	IO     Pool // CLR I/O completion threads (WCF runs operations on these)

	Admission Admission
	WCF       *WCF // nil: not a WCF service (a plain HTTP handler)

	// Gates are counted gates a request passes after the WCF throttles and
	// before its thread, each with its number of places (a semaphore in
	// the application's code); a request keeps its place until it ends.
	// They are the walk's extension point: see Walk.
	Gates []int

	Async bool   // the operation returns its thread while it waits downstream
	Steps []Step // the operation, in order

	// StartUp is the time the service host takes to open (loading its
	// assemblies, building its channel stack and listeners): it opens when
	// its first request arrives (activation on the first call, as IIS and
	// WAS start a service), and every request that arrives meanwhile waits
	// for it, not yet counted at the tier. 0: open from the start.
	StartUp time.Duration

	// MemoryPerRequest is the memory a request holds while it is inside
	// the tier (queued or executing), in bytes; reported as a level.
	MemoryPerRequest int64

	// Contention holds the mechanisms by which more concurrency costs the
	// process throughput (contention.go); all off unless set.
	Contention Contention

	// Farm names the farm the tier is a machine of ("" for a tier on one
	// machine), Replica its number in the farm (1-based; 0 outside one).
	Farm    string
	Replica int
	// Agent: a load agent, the machine the load's users run on (farm.go).
	// Its calls' encoding costs it nothing: its CPU per request is its
	// cpu step (load.agent_cpu).
	Agent bool
	// Machine, if > 0, is the machine the tier shares with the other tiers
	// of the same Machine (a test client on the service's box, a load agent
	// beside the service): one CPU of Cores cores (each tier's Cores is
	// the machine's) that serves the demands of them all, its own work and
	// its side of the bindings of its calls. 0: a machine of its own.
	Machine int
}

// IsASPNet reports whether the tier is hosted by ASP.NET (HostKind.IsASPNet).
func (t *Tier) IsASPNet() bool { return t.Host.IsASPNet() }

// HoldsWorker reports whether a request holds an ASP.NET worker thread for
// its whole life: an ASP.NET page, or a WCF service behind the synchronous
// HTTP module (the second of "two threads per request").
func (t *Tier) HoldsWorker() bool {
	return t.IsASPNet() && (t.Admission.SyncModule || t.WCF == nil)
}

// ExecStartsAt is the phase whose end makes a request executing (ASP.NET's
// Requests Executing, the end of Request Wait Time): its worker thread on
// an ASP.NET host, else the thread its operation runs on (or, when it
// takes an instance lock after decoding, that lock).
func (t *Tier) ExecStartsAt() PhaseKind {
	if t.IsASPNet() {
		return PhaseWorker
	}
	return PhaseThread
}

// RunsOnIO reports whether the operation runs on the I/O (completion port)
// pool, as WCF's does, rather than on a worker thread.
func (t *Tier) RunsOnIO() bool { return t.WCF != nil }

// CPUDiscipline is how a tier's cores serve CPU demands.
type CPUDiscipline uint8

const (
	// CPUSharing is processor sharing: n demands on c cores each progress
	// at min(1, c/n) (an operating system's time slicing, idealised).
	CPUSharing CPUDiscipline = iota
	// CPUFCFS is c servers first come, first served: a demand waits for a
	// free core, then holds it for the whole demand (the textbook M/M/c).
	CPUFCFS
)

var cpuNames = [...]string{"sharing", "fcfs"}

func (d CPUDiscipline) String() string { return cpuNames[d] }

// CPUNames are the names of the CPUDiscipline values.
func CPUNames() []string { return append([]string(nil), cpuNames[:]...) }

// Injection is a thread pool's rule for creating threads above its minimum.
type Injection uint8

const (
	InjectNone Injection = iota // threads are created on demand up to Max (Tomcat, Go)
	InjectCLR                   // the CLR gate: one thread per GateDelay while work is queued
	// InjectCLR2 is the .NET 2.0-era rule of SSCLI 2.0 (docs/dotnet.md §3b):
	// the gate ticks every GateDelay but adds a thread only once
	// GateDelay × 1.1^(threads − Min) has passed since the last one, so
	// injection slows geometrically (≈ one per 3.4 s at Min + 20).
	InjectCLR2
	// InjectCLR4 is the CLR 4+ controller (.NET Framework 4.0–4.8, .NET
	// Core and 5+): a goal moved by hill climbing on completions and
	// raised by the gate thread when no work item was dequeued for a
	// while (ThreadPool, HillClimbing; docs/dotnet.md §3c–§3e).
	InjectCLR4
)

var injectionNames = [...]string{"none", "clr", "clr2", "clr4"}

func (i Injection) String() string { return injectionNames[i] }

// Pool is a thread pool. Threads up to Min are created on demand; above Min
// the Injection rule applies; threads above Min retire after IdleTimeout.
type Pool struct {
	Min, Max    int
	Injection   Injection
	GateDelay   time.Duration // CLR: ~500 ms between injected threads
	IdleTimeout time.Duration // idle threads above Min retire after this
	// BoundedQueue: a request that asks for its first thread when none is
	// free (nor can be created at once) and QueueLimit requests already
	// wait for one is rejected (503), as by a thread-pool executor with a
	// bounded queue; QueueLimit 0 is no queue at all. Otherwise the queue
	// is unbounded (the CLR's).
	BoundedQueue bool
	QueueLimit   int
}

// AdmissionKind selects a tier's request admission algorithm.
type AdmissionKind uint8

const (
	AdmitNone       AdmissionKind = iota // everything is admitted at once
	AdmitClassic                         // ASP.NET RequestQueue: run while free workers >= MinFreeThreads
	AdmitConcurrent                      // a concurrency cap with a bounded FIFO (IIS 7 integrated, Tomcat)
)

var admissionNames = [...]string{"none", "classic", "concurrent"}

func (a AdmissionKind) String() string { return admissionNames[a] }

// Admission is the front door of a tier.
type Admission struct {
	Kind AdmissionKind
	// AdmitClassic: a request runs when Worker.Max - busy workers >=
	// MinFreeThreads (12 per CPU under autoConfig).
	MinFreeThreads int
	// AdmitConcurrent: at most MaxExecuting requests run at once.
	MaxExecuting int
	// QueueLimit is the deepest the admission queue gets; a request that
	// finds it full is rejected (503). For AdmitConcurrent with
	// CountExecuting, executing requests count too (.NET 4 requestQueueLimit).
	QueueLimit     int
	CountExecuting bool
	// SyncModule: the request holds an ASP.NET worker thread for its whole
	// life, besides the thread its handler runs on (WCF's "two threads per
	// request"). Otherwise the worker is released once handed to WCF.
	SyncModule bool
	// ExecutionTimeout aborts a server-side request that has run this long
	// after leaving the queue (ASP.NET executionTimeout, checked by a timer
	// every ExecutionCheck). 0 = none.
	ExecutionTimeout time.Duration
	ExecutionCheck   time.Duration
	// ClientConnectedCheck (AdmitClassic): a request dequeued after
	// waiting longer than this whose client has gone is dropped unserved
	// (ASP.NET clientConnectedCheck, 5 s). 0 = never.
	ClientConnectedCheck time.Duration
}

// Instancing is WCF's InstanceContextMode.
type Instancing uint8

const (
	PerSession Instancing = iota // the WCF default
	PerCall
	SingleInstance
)

var instancingNames = [...]string{"PerSession", "PerCall", "Single"}

func (i Instancing) String() string { return instancingNames[i] }

// Concurrency is WCF's ConcurrencyMode.
type Concurrency uint8

const (
	ConcurrencySingle Concurrency = iota // the WCF default: one thread per instance
	ConcurrencyReentrant
	ConcurrencyMultiple
)

var concurrencyNames = [...]string{"Single", "Reentrant", "Multiple"}

func (c Concurrency) String() string { return concurrencyNames[c] }

// WCF is a tier's service throttle and behaviour. Throttle queues are FIFO,
// unbounded and have no timeout of their own.
type WCF struct {
	MaxCalls, MaxSessions, MaxInstances int
	Instancing                          Instancing
	Concurrency                         Concurrency
	// MaxPendingSessions caps the security sessions negotiated (their
	// token issued) but not yet holding a MaxConcurrentSessions slot; a
	// negotiation that would exceed it fails (QuotaExceededException on
	// the service, SecurityNegotiationException at the client: failed).
	// 128 (LocalServiceSecuritySettings.MaxPendingSessions). A pending
	// session whose first call never arrives is dropped after
	// PendingSessionTimeout (its inactivityTimeout, 2 min). 0 = no cap.
	MaxPendingSessions    int
	PendingSessionTimeout time.Duration
	// InstanceCPU is the CPU WCF spends creating a service instance (its
	// InstanceContext and the service type's constructor), paid by the
	// call that creates one, inside the instance lock (PhaseActivate):
	// every call PerCall, and PerSession without a session; a session's
	// first call PerSession; the first call Single. 0: none beyond what
	// the operation's steps include.
	InstanceCPU time.Duration
	// SingleLockCPU is the CPU every call to a Single instance with
	// ConcurrencyMode Single or Reentrant spends on the instance's global
	// lock (PhaseActivate). 0: none.
	SingleLockCPU time.Duration
	// Listener is the service's netTcp listener; it applies to the
	// sessions of calls whose binding goes through it (Binding.Listener).
	Listener Listener
	// OneWay: the operation is one-way (OperationContract IsOneWay). The
	// dispatcher answers the request once it holds a call slot and has
	// decoded it, before the instance lock and the operation
	// (PhaseAccept): the caller's call ends there, with the transport's
	// acknowledgement (HTTP 202 Accepted) and no reply message; the
	// operation goes on, holding its throttles.
	OneWay bool
}

// OneWay reports whether calls into the tier are one-way (WCF.OneWay).
func (t *Tier) OneWay() bool { return t.WCF != nil && t.WCF.OneWay }

// SingleLock reports whether the service is one instance with one lock
// for all its calls (InstanceContextMode Single, ConcurrencyMode Single or
// Reentrant).
func (w *WCF) SingleLock() bool {
	return w.Instancing == SingleInstance && w.Concurrency != ConcurrencyMultiple
}

// ActivateCPU is the CPU a call spends in PhaseActivate: creating the
// service instance if it is the call that creates one (creates), and a
// singleton's per-call lock.
func (w *WCF) ActivateCPU(creates bool) time.Duration {
	var d time.Duration
	if creates {
		d += w.InstanceCPU
	}
	if w.SingleLock() {
		d += w.SingleLockCPU
	}
	return d
}

// Listener is a netTcp endpoint's connection listener (docs/dotnet.md §4, §5). A
// new connection (a proxy's session) that finds every MaxConcurrentSessions
// slot taken waits, FIFO: first among the MaxPending connections the
// listener has accepted but not yet turned into channels (the binding's
// maxConnections on the service), then in the operating system's accept
// queue of Backlog more (listenBacklog). One that finds both full is
// refused at once (the client's EndpointNotFoundException: the request
// ends Rejected); a waiting one fails on its client's timeout
// (OpenTimeout, SendTimeout). MaxPending and Backlog both 0: no limit.
type Listener struct {
	MaxPending, Backlog int
	// Resolution says how the values were decided, in words a user can
	// check ("10 and 10: netTcpBinding defaults before .NET 4.5").
	Resolution string
}

// StepKind is what one step of an operation does.
type StepKind uint8

const (
	StepCPU    StepKind = iota // use the tier's CPU for Demand (processor sharing)
	StepWait                   // wait Demand for something outside the model (database, disk)
	StepCall                   // call another tier and wait for the reply
	StepLock                   // enter the named lock (FIFO)
	StepUnlock                 // leave the named lock
)

var stepNames = [...]string{"cpu", "wait", "call", "lock", "unlock"}

func (k StepKind) String() string { return stepNames[k] }

// Step is one step of a tier's operation.
type Step struct {
	Kind   StepKind
	Demand sim.Dist // StepCPU, StepWait
	Call   *Call    // StepCall
	Lock   int      // StepLock, StepUnlock: index into the tier's locks
	// LockName is the lock's name, for messages.
	LockName string
	// Acquires (StepLock): how many short acquisitions of the lock the
	// stretch up to its unlock stands for; a request handed the lock by
	// a convoy pays a wake-up for each (Handoff.Delay). 0 or 1: one.
	Acquires int
	// Alloc (StepCPU): bytes the step allocates, charged to the
	// process's garbage collector when it starts (GC.Allocate).
	Alloc int64
}

// ProxyKind is how a caller obtains a WCF client proxy for a call.
type ProxyKind uint8

const (
	ProxyShared       ProxyKind = iota // one proxy, opened explicitly: calls run concurrently
	ProxySharedNoOpen                  // one proxy never opened explicitly: calls released one at a time until the open queue drains
	ProxyPerCall                       // a new proxy per call (pays CreateCost and, for secure sessions, a handshake)
	ProxyPoolCreate                    // a pool: take an idle proxy or create one; return it or close it when the pool is full
	ProxyPoolWait                      // a pool of PoolSize proxies: wait for one when all are taken
	ProxyPerUser                       // load only: each user keeps its own proxy, opened once
)

var proxyNames = [...]string{"shared", "shared-no-open", "per-call", "pool-create", "pool-wait", "per-user"}

func (p ProxyKind) String() string { return proxyNames[p] }

// Proxy is a caller's client proxy strategy for one call.
type Proxy struct {
	Kind     ProxyKind
	PoolSize int
	// CreateCost is the caller CPU to build a proxy (its channel) when a
	// ChannelFactory is at hand; FactoryCost is the CPU to build (and in
	// the end dispose) a ChannelFactory, which a new proxy adds when its
	// factory is not cached (factorycache.go). Each new proxy pays the
	// mean.
	CreateCost  sim.Dist
	FactoryCost sim.Dist
	// Construction is how each proxy is constructed; CacheMode is
	// ClientBase<T>.CacheSetting.
	Construction Construction
	CacheMode    FactoryCacheMode
	// FactoryCache is the size of the process's ChannelFactory cache
	// (FactoryCacheSize from .NET 3.0 SP1 / 3.5; 0: none, .NET 3.0). The
	// call sites of one caller to one target share it and must agree.
	FactoryCache int
	// Endpoints is how many endpoint addresses of the target the calls
	// spread over, picked by Pick (0 or 1: one); each is its own cache key.
	Endpoints int
	Pick      EndpointPick
}

// Conn is the client-side connection limit for one (caller, target) pair.
type Conn struct {
	Limit int // 0 = no limit
	// Resolution says how Limit was decided, in words a user can check
	// ("2: System.Net default in a self-hosted process, no host-specific entry").
	Resolution string
	// MaxPending, if > 0, rejects a call at once when this many already
	// wait for a connection (Envoy max_pending_requests). 0 = unbounded,
	// unless NoPending.
	MaxPending int
	// NoPending rejects a call at once when no connection is free (Envoy
	// max_pending_requests = 0): a loss system, Erlang's B.
	NoPending bool
	// WaitTimeout, if > 0, fails a call that waited this long for a
	// connection (HikariCP connectionTimeout). 0 = only the call's timeout.
	WaitTimeout time.Duration
	// PerConnection: a waiting call is bound to the least busy connection
	// and queued behind it (System.Net's HttpWebRequest), so one slow call
	// holds up its queue even when another connection frees first.
	// Otherwise one FIFO for all (Go's MaxConnsPerHost, pools).
	PerConnection bool
}

// Binding is the per-message cost of a binding and encoder.
type Binding struct {
	Name string
	// CPU per message at the sender and at the receiver, for the request
	// and for the reply: Base + PerKB × size in KB.
	CPUBase  time.Duration
	CPUPerKB time.Duration
	// Bytes on the wire: Overhead + Factor × payload.
	Overhead int
	Factor   float64
	// Sessionful bindings keep a server session for the proxy's life
	// (wsHttp with security session, netTcp, named pipes).
	Sessionful bool
	// SessionSetup is paid once per new proxy: CPU on each side and
	// round trips of Network latency (security negotiation).
	SessionCPU        time.Duration
	SessionRoundTrips int
	// Listener: the binding's connections reach a WCF service through its
	// netTcp listener (WCF.Listener).
	Listener bool

	// SessionIdleTimeout, if > 0: the server cannot see a client abort the
	// proxy (a session over HTTP: wsHttp's security or reliable session),
	// so a session whose client aborted it (after a timeout or a failure)
	// stays open, holding its MaxConcurrentSessions slot and its PerSession
	// instance, until this long after its last message (the binding's
	// receiveTimeout, 10 min; docs/dotnet.md §5); and a call waiting for its session
	// when its client gives up stays queued, orphaned, rather than leaving.
	// 0: an abort ends the session at once (netTcp and named pipes: the
	// connection closes and the server's channel faults).
	SessionIdleTimeout time.Duration

	// NegotiationLegs, if > 0, makes a new proxy's security negotiation
	// (SPNEGO legs and the SecurityContextToken request) its own exchange
	// before the first call: that many request/reply messages to the
	// service, each through its admission, worker and I/O threads and
	// costing it SessionCPU/NegotiationLegs of CPU, each a round trip of
	// Network latency (SessionRoundTrips then adds nothing). 0: the
	// negotiation is folded into the first call (SessionCPU on its decode,
	// SessionRoundTrips of latency).
	NegotiationLegs int
	// NegotiationTimeout is the client's limit for the whole negotiation
	// (the OpenTimeout of the channel's open, 1 min; docs/dotnet.md §5): past it the
	// call ends timed out (TimeoutException) and the proxy is aborted.
	// 0 = only the call's own timeout.
	NegotiationTimeout time.Duration
	// CloseMessage: closing a per-call proxy that has a session is a
	// message to the service (WS-SecureConversation's Cancel), through its admission and
	// threads, costing it one message's CPU; the session ends when the
	// service has processed it. A per-call proxy's call ends only once its
	// close has been answered, within CloseTimeout (1 min; docs/dotnet.md §5), else
	// timed out with the proxy aborted. false: the session ends when the
	// client lets go of the proxy, with no message.
	CloseMessage bool
	CloseTimeout time.Duration
}

// Network is the link between caller and target.
type Network struct {
	Latency   time.Duration // one way
	Bandwidth float64       // bytes per second; 0 = unlimited
}

// Retry re-sends a call that timed out or was rejected.
type Retry struct {
	Attempts int      // total attempts including the first; 1 = no retry
	Backoff  sim.Dist // wait before each retry
	// Jitter in [0,1]: the wait is multiplied by a uniform factor in [1-Jitter, 1].
	Jitter float64
}

// Call is a synchronous request/reply from one tier (or the load generator)
// to another.
type Call struct {
	Target  int // tier index
	Timeout time.Duration
	Conn    Conn
	Proxy   Proxy
	Binding Binding
	Network Network
	Retry   Retry
	// RequestKB and ReplyKB are the payload sizes.
	RequestKB, ReplyKB float64
	// Farm, if not nil, is the farm Target is the first replica of: each
	// request goes to the replica the balancer picks (farm.go). PerHost:
	// the caller addresses each machine by its own host name (a connection
	// pool, and limit, per machine) and balances by itself; otherwise it
	// addresses the farm by one virtual host name (one pool and limit for
	// the whole farm) through the farm's balancer.
	Farm    *Farm
	PerHost bool
}

// LoadKind selects closed users or open arrivals.
type LoadKind uint8

const (
	LoadClosed LoadKind = iota
	LoadOpen
)

// Point is one corner of a piecewise-linear schedule.
type Point struct {
	At    time.Duration
	Value float64
}

// Schedule is a piecewise-linear function of time; before the first point
// it holds the first value, after the last the last value. A step is two
// points at one instant.
type Schedule []Point

// At returns the schedule's value at t.
func (s Schedule) At(t time.Duration) float64 {
	if len(s) == 0 {
		return 0
	}
	if t <= s[0].At {
		return s[0].Value
	}
	for i := 1; i < len(s); i++ {
		if t < s[i].At {
			a, b := s[i-1], s[i]
			f := float64(t-a.At) / float64(b.At-a.At)
			return a.Value + f*(b.Value-a.Value)
		}
	}
	return s[len(s)-1].Value
}

// Max returns the largest value the schedule takes.
func (s Schedule) Max() float64 {
	m := 0.0
	for _, p := range s {
		if p.Value > m {
			m = p.Value
		}
	}
	return m
}

// Load is the workload: who calls the entry tier, how often, and how long
// they wait.
type Load struct {
	Kind  LoadKind
	Users Schedule // LoadClosed: concurrent users over time
	Think sim.Dist // LoadClosed: think time between a reply and the next request
	Rate  Schedule // LoadOpen: arrivals per second over time
	// Arrivals, if not nil, are the instants of an open load replayed as
	// they were (a load test's trace: format's load kind "trace"), in
	// order; Rate is then their rate over time, for the bounds, and is
	// not used to generate.
	Arrivals []time.Duration
	// Interarrival shapes open arrivals; its mean is rescaled to 1/rate.
	// Zero: Poisson (exponential).
	Interarrival sim.Dist
	// Call is how the load client reaches the entry tier (its own
	// connection limit, timeout, binding, retries).
	Call Call
}

// The names of each enumeration, in the order of its values: the words the
// experiment format accepts. Each call returns a fresh slice.

// HostNames are the names of the HostKind values.
func HostNames() []string { return append([]string(nil), hostNames[:]...) }

// InjectionNames are the names of the Injection values.
func InjectionNames() []string { return append([]string(nil), injectionNames[:]...) }

// AdmissionNames are the names of the AdmissionKind values.
func AdmissionNames() []string { return append([]string(nil), admissionNames[:]...) }

// InstancingNames are the names of the Instancing values.
func InstancingNames() []string { return append([]string(nil), instancingNames[:]...) }

// ConcurrencyNames are the names of the Concurrency values.
func ConcurrencyNames() []string { return append([]string(nil), concurrencyNames[:]...) }

// ProxyNames are the names of the ProxyKind values.
func ProxyNames() []string { return append([]string(nil), proxyNames[:]...) }

// Cost returns the CPU one side spends on a message of kb kilobytes.
func (b *Binding) Cost(kb float64) time.Duration {
	return b.CPUBase + time.Duration(float64(b.CPUPerKB)*kb)
}

// Wire returns the transfer time of a message of kb kilobytes.
func (c *Call) Wire(kb float64) time.Duration {
	d := c.Network.Latency
	if bw := c.Network.Bandwidth; bw > 0 {
		bytes := float64(c.Binding.Overhead) + c.Binding.Factor*kb*1024
		d += sim.FromSeconds(bytes / bw)
	}
	return d
}
