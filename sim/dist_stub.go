package sim

import "time"

// TEMPORARY stub until dist.go lands.
type Dist struct {
	mean time.Duration
	exp  bool
}

func Const(d time.Duration) Dist         { return Dist{mean: d} }
func Exp(mean time.Duration) Dist        { return Dist{mean: mean, exp: true} }
func (d Dist) Mean() time.Duration       { return d.mean }
func (d Dist) IsZero() bool              { return d.mean == 0 }
func (d Dist) Scale(f float64) Dist      { d.mean = time.Duration(float64(d.mean) * f); return d }
func (d Dist) String() string            { return d.mean.String() }
func (d Dist) Sampler(s *Stream) Sampler { return Sampler{d: d, s: s} }

type Sampler struct {
	d Dist
	s *Stream
}

func (s *Sampler) Sample() time.Duration {
	if s.d.exp {
		return FromSeconds(s.s.ExpFloat64() * s.d.mean.Seconds())
	}
	return s.d.mean
}
