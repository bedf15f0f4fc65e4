package model

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// poolSim drives a ThreadPool by hand: a calendar of gate ticks, retire
// ticks and work items that each hold a thread for a fixed time.
type poolSim struct {
	p      *ThreadPool
	now    time.Duration
	events []poolEvent
	seq    int
	starts []time.Duration // when each item got its thread, in item order
}

type poolEvent struct {
	at  time.Duration
	seq int
	do  func()
}

func newPoolSim(spec Pool, cpu int) *poolSim {
	s := &poolSim{}
	s.p = NewThreadPool(spec, fixedRand{})
	s.p.Grant = func(w *Waiter) { w.TakeGrant(); w.Owner.(func())() }
	s.p.ArmGate = func(d time.Duration) { s.at(s.now+d, func() { s.p.GateTick(s.now) }) }
	s.p.ArmRetire = func(d time.Duration) { s.at(s.now+d, func() { s.p.RetireTick(s.now) }) }
	if cpu > 0 {
		s.p.CPU = func(time.Duration) int { return cpu }
	}
	return s
}

func (s *poolSim) at(t time.Duration, do func()) {
	s.seq++
	s.events = append(s.events, poolEvent{t, s.seq, do})
}

// item asks for a thread at t and holds it for d.
func (s *poolSim) item(t, d time.Duration) {
	i := len(s.starts)
	s.starts = append(s.starts, -1)
	s.at(t, func() {
		started := func() {
			s.starts[i] = s.now
			s.at(s.now+d, func() { s.p.Release(s.now) })
		}
		w := &Waiter{}
		w.Owner = started
		if s.p.Acquire(w, s.now) {
			started()
		}
	})
}

func (s *poolSim) run(until time.Duration) {
	for len(s.events) > 0 {
		sort.Slice(s.events, func(i, j int) bool {
			a, b := s.events[i], s.events[j]
			return a.at < b.at || a.at == b.at && a.seq < b.seq
		})
		e := s.events[0]
		if e.at > until {
			return
		}
		s.events = s.events[1:]
		s.now = e.at
		e.do()
	}
}

func (s *poolSim) startTable() string {
	var b []string
	for _, t := range s.starts {
		b = append(b, fmt.Sprint(t.Seconds()))
	}
	return strings.Join(b, " ")
}

func clr4Pool(min int) Pool {
	return Pool{Min: min, Max: 100, Injection: InjectCLR4, GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
}

// TestCLR4StarvationBurst: ten items of 10 s at once, min 2. The gate
// ticks every 500 ms; with CPU low the pool is starved once nothing was
// dequeued for more than 500 ms, and the goal becomes the threads working
// + 1. The new thread's own dequeue restarts that clock, so the next tick
// (500 ms later, not more) finds it fresh: one thread a second, on every
// other tick (PortableThreadPool.GateThread, SufficientDelaySinceLastDequeue).
func TestCLR4StarvationBurst(t *testing.T) {
	s := newPoolSim(clr4Pool(2), 0)
	for i := 0; i < 10; i++ {
		s.item(0, 10*time.Second)
	}
	s.run(9500 * time.Millisecond)
	if got, want := s.startTable(), "0 0 1 2 3 4 5 6 7 8"; got != want {
		t.Errorf("starts %s, want %s", got, want)
	}
	if s.p.Threads != 10 || s.p.Goal != 10 {
		t.Errorf("threads %d, goal %d; want 10, 10", s.p.Threads, s.p.Goal)
	}
}

// TestCLR4StarvationBurstCPUHigh: the same burst on a machine at 80 % CPU
// or more: starved only after goal × 1 s without a dequeue (2 s at goal
// 2, 3 s at 3, …). Ticks at 0.5 s steps: 2.5 s (2.5 > 2), 6 s (3.5 > 3).
// From 10 s items end and their threads take the next ones at 10, 12.5,
// 16 and 20 s: never more than 4 s (the goal's threshold) without a
// dequeue, so no thread is added again.
func TestCLR4StarvationBurstCPUHigh(t *testing.T) {
	s := newPoolSim(clr4Pool(2), 100)
	for i := 0; i < 10; i++ {
		s.item(0, 10*time.Second)
	}
	s.run(60 * time.Second)
	if got, want := s.startTable(), "0 0 2.5 6 10 10 12.5 16 20 20"; got != want {
		t.Errorf("starts %s, want %s", got, want)
	}
}

// TestCLR4MinRaised: with min 10, ten items start at once: threads up to
// the minimum come without delay (SetMinThreads raises the goal).
func TestCLR4MinRaised(t *testing.T) {
	s := newPoolSim(clr4Pool(10), 0)
	for i := 0; i < 10; i++ {
		s.item(0, 10*time.Second)
	}
	s.run(30 * time.Second)
	if got, want := s.startTable(), "0 0 0 0 0 0 0 0 0 0"; got != want {
		t.Errorf("starts %s, want %s", got, want)
	}
}

// TestCLR4RetireLowersGoal: threads idle for a whole IdleTimeout exit,
// and the goal follows them down to the minimum, so the next burst
// starves again.
func TestCLR4RetireLowersGoal(t *testing.T) {
	s := newPoolSim(clr4Pool(2), 0)
	for i := 0; i < 6; i++ {
		s.item(0, 10*time.Second)
	}
	s.run(15 * time.Second)
	if s.p.Threads != 6 || s.p.Goal != 6 {
		t.Fatalf("after the burst: threads %d, goal %d; want 6, 6", s.p.Threads, s.p.Goal)
	}
	s.run(60 * time.Second)
	if s.p.Threads != 2 || s.p.Goal != 2 {
		t.Errorf("after 45 s idle: threads %d, goal %d; want 2, 2", s.p.Threads, s.p.Goal)
	}
}
