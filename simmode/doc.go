// Package simmode is tsim's first executor: it runs a compiled
// model.Topology as a discrete-event simulation on a sim.Engine and
// returns its results.Run. Its sibling realmode runs the same Topology
// for real; the two are mirrored file by file (run.go, tier.go, job.go,
// call.go, session.go, load.go, farm.go, machine.go, pool.go, slots.go,
// level.go), and neither imports the other.
//
// What a request does, and every decision on the way, is package model's:
// the walk of a tier (model.Tier.Walk) and of a call, admission and
// throttle decisions, the FIFO hand-off of every counted resource, thread
// pools, sessions, proxies, retries, the users' schedule, counters and the
// collection of results. This package gives them virtual time: each
// request is an event-driven state machine (a job in a tier, a call from a
// caller) whose handlers react to grants, completions and timeouts, one
// event at a time, without goroutines.
//
// Every request ends in exactly one of completed, timed out, rejected,
// failed or in flight, and Run checks that the counts add up to the number
// generated.
//
// Package simmode imports model, sim and results; it never calls
// time.Now, time.Sleep, the global math/rand functions, os or net.
package simmode
