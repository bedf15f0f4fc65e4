package sim_test

import (
	"fmt"

	"github.com/tsim-dev/tsim/sim"
)

func ExampleParseDist() {
	for _, s := range []string{"20ms", "exp(0.05)", "Normal(mean=10ms, sd=20ms)", "lognormal(80ms,1.5)", "pareto(xm=10ms,alpha=1)"} {
		d, err := sim.ParseDist(s, sim.ParseOptions{})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-28s mean %-10v cv %.3g\n", d, d.Mean(), d.CV())
	}
	_, err := sim.ParseDist("gamma(80ms,0)", sim.ParseOptions{})
	fmt.Println(err != nil)
	// Output:
	// const(20ms)                  mean 20ms       cv 0
	// exp(50ms)                    mean 50ms       cv 1
	// normal(10ms,20ms)            mean 20.183209ms cv 0.691
	// lognormal(mean=80ms,cv=1.5)  mean 80ms       cv 1.5
	// pareto(xm=10ms,alpha=1)      mean 2562047h47m16.854775807s cv +Inf
	// true
}

func ExampleDist_Sampler() {
	d := sim.MustParseDist("erlang(4,100ms)").Scale(0.5) // a server twice as fast
	s := d.Sampler(sim.New(1).Stream("tier/be/service"))
	var sum float64
	const n = 100000
	for range n {
		sum += s.Sample().Seconds()
	}
	fmt.Println(d, d.Mean())
	fmt.Printf("sample mean within 1%%: %v\n", sum/n > 0.0495 && sum/n < 0.0505)
	// Output:
	// erlang(4,50ms) 50ms
	// sample mean within 1%: true
}
