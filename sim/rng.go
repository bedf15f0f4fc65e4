package sim

import (
	"math/rand/v2"
)

// Streams derives independent random streams from one master seed. Each
// stream is named by a path such as "tier/be/cpu/demand"; its seed depends
// only on the master seed and the path, so adding a component never shifts
// the numbers another component sees, and two what-if variants that share a
// path see the same samples (common random numbers).
type Streams struct {
	seed uint64
}

// NewStreams returns the stream family of a master seed.
func NewStreams(seed uint64) Streams { return Streams{seed: seed} }

// Seed returns the master seed.
func (s Streams) Seed() uint64 { return s.seed }

// Stream returns a new stream named path. Calling it twice with one path
// returns two streams that produce the same numbers.
func (s Streams) Stream(path string) *Stream {
	h := uint64(fnvOffset)
	for i := 0; i < len(path); i++ {
		h ^= uint64(path[i])
		h *= fnvPrime
	}
	a := splitmix64(s.seed ^ splitmix64(h))
	b := splitmix64(a ^ 0x6a09e667f3bcc909)
	st := &Stream{path: path}
	st.pcg = rand.NewPCG(a, b)
	st.Rand = rand.New(st.pcg)
	return st
}

// DeriveSeed returns the k-th seed derived from a master seed (k = 0 gives
// the seed itself), for independent replications: SplitMix64 scrambles
// (seed, k) so that the replications of nearby seeds do not overlap.
func DeriveSeed(seed, k uint64) uint64 {
	if k == 0 {
		return seed
	}
	return splitmix64(seed ^ splitmix64(k))
}

// splitmix64 is the finaliser of SplitMix64 (Steele, Lea, Flood 2014): a
// bijective scramble that spreads nearby inputs far apart.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Stream is one named sequence of random numbers. It embeds *rand.Rand for
// direct use, and Src gives the underlying source for gonum's distuv.
type Stream struct {
	*rand.Rand
	pcg  *rand.PCG
	path string
}

// Src returns the stream's source, to set as a distuv distribution's Src.
func (s *Stream) Src() rand.Source { return s.pcg }

// Path returns the stream's name.
func (s *Stream) Path() string { return s.path }
