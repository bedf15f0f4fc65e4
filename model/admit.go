package model

import "time"

// Admission and throttle decisions are plain functions of state, shared by
// the simulator and the real executor, so that cross-validation tests the
// model and not two implementations of it.

// Decision is what a front door does with an arriving request.
type Decision uint8

const (
	DecisionRun    Decision = iota // start now
	DecisionQueue                  // wait in the admission queue
	DecisionReject                 // refuse at once (HTTP 503 Server Too Busy)
)

var decisionNames = [...]string{"run", "queue", "reject"}

func (d Decision) String() string { return decisionNames[d] }

// DecideClassic is the ASP.NET RequestQueue rule (IIS 6 / classic pipeline,
// docs/dotnet.md §2b): a request runs at once when at least minFree worker
// threads are free and nobody is queued; otherwise it is queued unless the
// queue already holds queueLimit requests. The check runs on a thread that
// is itself busy with the arriving request, so free = max − busy − 1; with
// autoConfig's 100N and 88N that allows exactly 12 executing per CPU.
func DecideClassic(maxWorkers, busyWorkers, minFree, queued, queueLimit int) Decision {
	if CanDrainClassic(maxWorkers, busyWorkers, minFree) && queued == 0 {
		return DecisionRun
	}
	if queued >= queueLimit {
		return DecisionReject
	}
	return DecisionQueue
}

// CanDrainClassic reports whether the head of the classic queue may start.
func CanDrainClassic(maxWorkers, busyWorkers, minFree int) bool {
	return maxWorkers-busyWorkers-1 >= minFree
}

// DecideConcurrent is a concurrency cap with a bounded FIFO (IIS 7 integrated
// MaxConcurrentRequestsPerCPU, Tomcat maxThreads/acceptCount,
// docs/dotnet.md §2c, §8). With countExecuting the limit counts queued and
// executing requests together (.NET 4 requestQueueLimit).
func DecideConcurrent(executing, maxExecuting, queued, queueLimit int, countExecuting bool) Decision {
	depth := queued
	if countExecuting {
		// "Requests Current" (queued and executing) at the limit: 503 even
		// if the request could run (.NET 4 requestQueueLimit,
		// docs/dotnet.md §2c).
		depth += executing
		if depth >= queueLimit {
			return DecisionReject
		}
	}
	if executing < maxExecuting && queued == 0 {
		return DecisionRun
	}
	if depth >= queueLimit {
		return DecisionReject
	}
	return DecisionQueue
}

// ShouldInject is the CLR gate rule (docs/dotnet.md §3b, simplified to its
// low-CPU branch): at a gate tick, add one thread when work is queued, no
// thread is idle and the pool is below its maximum.
func ShouldInject(threads, busy, max, queued int) bool {
	return queued > 0 && busy >= threads && threads < max
}

// DecideListener is a netTcp listener's answer to a new connection that
// finds no MaxConcurrentSessions slot free (docs/dotnet.md §4, §5): wait among the
// connections pending and in the backlog, or be refused once waiting
// connections fill both (DecisionReject). waiting counts the listener's
// connections already waiting for their session.
func DecideListener(l *Listener, waiting int) Decision {
	if l.MaxPending == 0 && l.Backlog == 0 {
		return DecisionQueue
	}
	if waiting >= l.MaxPending+l.Backlog {
		return DecisionReject
	}
	return DecisionQueue
}

// Admit is the tier's door for an arriving request (Admission.Kind): run
// it now, queue it, or refuse it, given the worker threads busy, the
// requests executing and those already queued.
func (t *Tier) Admit(busyWorkers, executing, queued int) Decision {
	a := &t.Admission
	switch a.Kind {
	case AdmitClassic:
		return DecideClassic(t.Worker.Max, busyWorkers, a.MinFreeThreads, queued, a.QueueLimit)
	case AdmitConcurrent:
		return DecideConcurrent(executing, a.MaxExecuting, queued, a.QueueLimit, a.CountExecuting)
	}
	return DecisionRun
}

// CanStart reports whether the head of the tier's admission queue may
// start now.
func (t *Tier) CanStart(busyWorkers, executing int) bool {
	a := &t.Admission
	switch a.Kind {
	case AdmitClassic:
		return CanDrainClassic(t.Worker.Max, busyWorkers, a.MinFreeThreads)
	case AdmitConcurrent:
		return executing < a.MaxExecuting
	}
	return true
}

// DropsQueued reports whether a request leaving the admission queue after
// waiting there for waited is dropped unserved: its client has gone
// (orphaned) and it waited longer than ClientConnectedCheck.
func (a *Admission) DropsQueued(orphaned bool, waited time.Duration) bool {
	return a.ClientConnectedCheck > 0 && orphaned && waited > a.ClientConnectedCheck
}
