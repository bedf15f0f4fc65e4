package model

import "testing"

func TestDecideConcurrent(t *testing.T) {
	cases := []struct {
		exec, max, queued, limit int
		count                    bool
		want                     Decision
	}{
		{0, 2, 0, 4, false, DecisionRun},
		{2, 2, 0, 4, false, DecisionQueue},
		{2, 2, 4, 4, false, DecisionReject},
		{1, 2, 1, 4, false, DecisionQueue}, // FIFO: nobody overtakes the queue
		// .NET 4: executing requests count against requestQueueLimit, even
		// when the concurrency cap (5000 per CPU) would let one more run.
		{5000, 20000, 0, 5000, true, DecisionReject},
		{4999, 20000, 0, 5000, true, DecisionRun},
		{2, 2, 1, 4, true, DecisionQueue},
		{2, 2, 2, 4, true, DecisionReject},
	}
	for _, c := range cases {
		if got := DecideConcurrent(c.exec, c.max, c.queued, c.limit, c.count); got != c.want {
			t.Errorf("DecideConcurrent(%d, %d, %d, %d, %v) = %v, want %v", c.exec, c.max, c.queued, c.limit, c.count, got, c.want)
		}
	}
}

func TestDecideClassic(t *testing.T) {
	// autoConfig on 1 CPU: 100 workers, minFreeThreads 88 → 12 executing.
	cases := []struct {
		busy, queued int
		want         Decision
	}{
		{0, 0, DecisionRun},
		{11, 0, DecisionRun},
		{12, 0, DecisionQueue},
		{5, 1, DecisionQueue}, // nobody overtakes the queue
		{12, 5000, DecisionReject},
	}
	for _, c := range cases {
		if got := DecideClassic(100, c.busy, 88, c.queued, 5000); got != c.want {
			t.Errorf("DecideClassic(busy %d, queued %d) = %v, want %v", c.busy, c.queued, got, c.want)
		}
	}
}

func TestDecideListener(t *testing.T) {
	l := Listener{MaxPending: 10, Backlog: 10}
	for _, tc := range []struct {
		waiting int
		want    Decision
	}{{0, DecisionQueue}, {19, DecisionQueue}, {20, DecisionReject}, {25, DecisionReject}} {
		if got := DecideListener(&l, tc.waiting); got != tc.want {
			t.Errorf("waiting %d: %v, want %v", tc.waiting, got, tc.want)
		}
	}
	if DecideListener(&Listener{}, 1e6) != DecisionQueue {
		t.Error("no limit refused")
	}
}
