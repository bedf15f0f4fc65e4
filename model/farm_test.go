package model

import (
	"fmt"
	"testing"
)

func TestPick(t *testing.T) {
	// Least outstanding skips the busy machine; round robin does not.
	s := BalanceState{Next: 0, Outstanding: []int{3, 0, 1}}
	if r := Pick(BalanceLeastOutstanding, &s, 0, -1); r != 1 || s.Next != 2 {
		t.Errorf("least outstanding picked %d (next %d), want 1 (next 2)", r, s.Next)
	}
	s.Outstanding = []int{1, 1, 1}
	if r := Pick(BalanceLeastOutstanding, &s, 0, -1); r != 2 {
		t.Errorf("least outstanding tie picked %d, want 2 (the round-robin position)", r)
	}
	s = NewBalanceState(3)
	var got []int
	for range 4 {
		got = append(got, Pick(BalanceRoundRobin, &s, 0, -1))
	}
	if fmt.Sprint(got) != "[0 1 2 0]" {
		t.Errorf("round robin %v", got)
	}
	if r := Pick(BalanceRandom, &s, 0.999999, -1); r != 2 {
		t.Errorf("random at u≈1 picked %d", r)
	}
	if r := Pick(BalanceByUser, &s, 0, 7); r != 1 {
		t.Errorf("user 7 of 3 agents on %d, want 1", r)
	}
	// Affinity keeps a session's calls on its machine; without, a call
	// sent elsewhere is refused there.
	b := Balancer{Policy: BalanceRoundRobin, Affinity: true}
	s = NewBalanceState(3)
	if r, no := ChooseReplica(&b, &s, 0, -1, 2, nil); r != 2 || no || s.Next != 0 {
		t.Errorf("affinity: %d %v (next %d)", r, no, s.Next)
	}
	b.Affinity = false
	if r, no := ChooseReplica(&b, &s, 0, -1, 2, nil); r != 0 || !no {
		t.Errorf("no affinity: %d %v, want 0 refused", r, no)
	}
	// Sticky: the connection's machine, or the session's with affinity.
	b = Balancer{Policy: BalanceSticky}
	conn := func() int { return 1 }
	if r, no := ChooseReplica(&b, &s, 0, -1, 2, conn); r != 1 || !no {
		t.Errorf("sticky, session elsewhere: %d %v, want 1 refused", r, no)
	}
	if r, no := ChooseReplica(&b, &s, 0, -1, -1, conn); r != 1 || no {
		t.Errorf("sticky, no session: %d %v, want 1", r, no)
	}
	b.Affinity = true
	if r, no := ChooseReplica(&b, &s, 0, -1, 2, conn); r != 2 || no {
		t.Errorf("sticky with affinity: %d %v, want 2", r, no)
	}
	if fmt.Sprint(StickyShares(6, 4)) != "[0.3333333333333333 0.3333333333333333 0.16666666666666666 0.16666666666666666]" {
		t.Errorf("sticky shares %v", StickyShares(6, 4))
	}
}
