// Package sim is tsim's discrete-event engine: a virtual clock, an event
// calendar with cheap cancellation, named random streams derived from one
// master seed, service-time distributions parsed from strings, and the
// statistics a simulation study needs (tallies, quantiles, time-weighted
// levels, samplers, confidence intervals, warm-up deletion).
//
// An Engine is a plain value driven by one goroutine: no locks, no goroutine
// per entity, no wall clock. Concurrency lives only across replications, each
// with its own Engine. Given the same seed, a run is the same sequence of
// events, bit for bit. The one exception to "one goroutine" is
// Engine.Interrupt, which another goroutine calls to stop a Run (Run looks
// at it every 4096 events).
//
// The calendar is an index-tracked 4-ary heap. Events that run a fixed delay
// after they are scheduled, such as request deadlines (and, in model, the
// constant think times, waits and transfers), can go through a Lane
// instead: a FIFO with only its head in the heap, so that cancelling them,
// which is a deadline's usual fate, costs O(1), and the heap stays shallow.
// The events of a population that vary (in model, the think times of
// thousands of users) can go in a Group: a heap of their own with only
// their earliest in the calendar's, so that the other events sift a
// shallow heap. Engine.Reschedule moves a pending event in one sift (the
// processor-sharing CPU moves its completion so).
// An event scheduled with no delay (a slot handed to its next waiter) waits
// in a FIFO of its class, never in the heap. None of these changes the
// order in which events run.
//
// Ties. Events are ordered by (time, class, insertion sequence). At one
// instant, every ClassRelease event runs before every ClassCompletion event,
// then ClassTimeout, then ClassArrival, then ClassSample. So a resource freed
// at t is visible to an acquisition at t; a service that completes exactly at
// its caller's deadline counts as completed (completion beats timeout); and a
// sampler at t sees the state after everything else that happened at t.
//
// Package sim imports nothing else of tsim, and never the wall clock
// (time.Now, time.Sleep), the global math/rand functions, os or net; a test
// keeps it so.
package sim
