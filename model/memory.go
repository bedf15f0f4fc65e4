package model

// Memory is a process's memory against what it may have. It commits Base
// for itself, StackPerThread for every thread its pools hold (the CLR
// commits a managed thread's whole stack when it starts it, .NET 2.0–4.x;
// MSDN <disableCommitThreadStack>), and the working set of every request
// inside it (Tier.MemoryPerRequest). Past Limit the process either pages
// (OnFull = MemoryPage: Limit is the machine's memory left for it) and
// its CPU work slows by 1 + PagingFactor × the share of its memory that
// does not fit; or it fails (MemoryFail: Limit is what it may commit, a
// 32-bit process's 2 GB of address space): a request that would take it
// past Limit ends failed with an OutOfMemoryException, counted apart.
// Limit 0: off.
//
// "Each thread would hold a fair amount of system resource, i.e., memory.
// It would cause the service to be very slow to respond." (Dong, "WCF
// Request Throttling and Server Scalability", 2008.)
type Memory struct {
	Limit          int64 // bytes; 0 = off
	OnFull         MemoryAction
	Base           int64 // bytes
	StackPerThread int64 // bytes
	PagingFactor   float64
}

// MemoryAction is what a process does past its memory limit.
type MemoryAction uint8

const (
	MemoryPage MemoryAction = iota // it pages: work slows
	MemoryFail                     // it fails requests with OutOfMemory
)

var memoryActionNames = [...]string{"page", "fail"}

func (a MemoryAction) String() string { return memoryActionNames[a] }

// MemoryActionNames are the names of the MemoryAction values.
func MemoryActionNames() []string { return append([]string(nil), memoryActionNames[:]...) }

// On reports whether memory is limited.
func (m *Memory) On() bool { return m.Limit > 0 }

// Committed is what a process with threads threads and requests requests
// of perRequest bytes each has committed.
func (m *Memory) Committed(threads, requests int, perRequest int64) int64 {
	return m.Base + m.StackPerThread*int64(max(threads, 0)) + perRequest*int64(max(requests, 0))
}

// Slowdown is the factor (≥ 1) by which CPU work slows with committed
// bytes: 1 + PagingFactor × (committed − Limit)/committed past a paging
// process's Limit, else 1.
func (m *Memory) Slowdown(committed int64) float64 {
	if m.Limit <= 0 || m.OnFull != MemoryPage || committed <= m.Limit {
		return 1
	}
	return 1 + m.PagingFactor*float64(committed-m.Limit)/float64(committed)
}

// Fails reports whether a request that brings the process's commitment
// to committed fails with OutOfMemory.
func (m *Memory) Fails(committed int64) bool {
	return m.Limit > 0 && m.OnFull == MemoryFail && committed > m.Limit
}
