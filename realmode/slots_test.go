package realmode

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitQueued waits until s has n live waiters.
func waitQueued(t *testing.T, s *sem, n int) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if _, w := s.snapshot(); w == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("waiters never reached %d", n)
}

func TestSemFIFO(t *testing.T) {
	s := newSem(1)
	ctx := context.Background()
	if err := s.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20
	order := make(chan int, n)
	for i := 0; i < n; i++ {
		go func() {
			if err := s.acquire(ctx); err != nil {
				t.Error(err)
				return
			}
			order <- i
			s.release()
		}()
		waitQueued(t, s, i+1) // queue them in a known order
	}
	s.release()
	for i := 0; i < n; i++ {
		if got := <-order; got != i {
			t.Fatalf("grant %d went to waiter %d: not FIFO", i, got)
		}
	}
	if u, w := s.snapshot(); u != 0 || w != 0 {
		t.Fatalf("in use %d, waiting %d at the end", u, w)
	}
}

func TestSemCancelSkipsWaiter(t *testing.T) {
	// A waiter that gave up is skipped: the freed permit goes to the next
	// one still waiting, and the count never drops in between (hand-off).
	s := newSem(1)
	bg := context.Background()
	_ = s.acquire(bg)
	ctx, cancel := context.WithCancelCause(bg)
	gaveUp := make(chan error)
	go func() { gaveUp <- s.acquire(ctx) }()
	waitQueued(t, s, 1)
	got := make(chan struct{})
	go func() { _ = s.acquire(bg); close(got) }()
	waitQueued(t, s, 2)
	stop := errors.New("caller timed out")
	cancel(stop)
	if err := <-gaveUp; err != stop {
		t.Fatalf("cancelled acquire returned %v, want its cause", err)
	}
	if u, w := s.snapshot(); u != 1 || w != 1 {
		t.Fatalf("after cancel: in use %d, waiting %d; want 1, 1", u, w)
	}
	s.release()
	<-got
	if u, w := s.snapshot(); u != 1 || w != 0 {
		t.Fatalf("after hand-off: in use %d, waiting %d; want 1, 0", u, w)
	}
}

func TestSemGrantRacingCancelIsPassedOn(t *testing.T) {
	// Many rounds of a grant and a cancellation at about the same time: a
	// permit granted to a waiter that is giving up must be passed on, never
	// lost or doubled.
	s := newSem(2)
	bg := context.Background()
	for round := 0; round < 200; round++ {
		_ = s.acquire(bg)
		_ = s.acquire(bg)
		ctx, cancel := context.WithCancel(bg)
		done := make(chan struct{})
		go func() {
			if s.acquire(ctx) == nil {
				s.release()
			}
			close(done)
		}()
		waitQueued(t, s, 1)
		go cancel()
		s.release()
		<-done
		s.release()
		if u, w := s.snapshot(); u != 0 || w != 0 {
			t.Fatalf("round %d: in use %d, waiting %d", round, u, w)
		}
	}
}

func TestSemUnlimited(t *testing.T) {
	s := newSem(0)
	for i := 0; i < 1000; i++ {
		if w := s.begin(); w != nil {
			t.Fatal("an unlimited semaphore queued")
		}
	}
}
