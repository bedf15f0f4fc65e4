package analysis_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/format"
)

// shop is an ASP.NET front end whose calls to its API go through two
// connections per host: the '*' maxconnection entry in effect is 2
// (without autoConfig nothing overrides it; docs/dotnet.md §1.1).
const shop = `name = "shop"
seed = 1
duration = "1m"

[load]
users = 50
think = "exp(1s)"

[[tier]]
name = "web"
preset = "aspnet-classic-net35"
cores = 4
auto_config = false
calls.maxconnection = 2
[[tier.step]]
cpu = "exp(2ms)"
[[tier.step]]
call = "api"

[[tier]]
name = "api"
cores = 4
[[tier.step]]
cpu = "exp(10ms)"
[[tier.step]]
wait = "exp(100ms)"
`

func ExampleExplain() {
	x, err := format.LoadExperiment("shop.toml", []byte(shop), nil)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := analysis.Explain(context.Background(), x, analysis.ExplainOptions{Path: "shop.toml"})
	if err != nil {
		log.Fatal(err)
	}
	v := ex.Variants[0]
	b := v.Bounds.Binding
	fmt.Printf("binds first: %s, %.0f slots held %v each: at most %.1f requests/s, saturating at %.1f users\n",
		b.Throttle, b.Limit, b.Hold.Round(time.Millisecond), b.PerSec, b.Users)
	fmt.Printf("the load peaks at %.0f users: saturated %v\n", v.Bounds.Users, v.Bounds.Saturated)
	fmt.Printf("simulated: %.1f s per request waiting for a connection\n", v.Run.Breakdown.ConnWait)
	ch := v.Change
	fmt.Printf("smallest change: raise %s from %d: %s = %s (%s for bursts)\n", ch.Knob, ch.From, ch.Set.Key, ch.Set.Value, ch.Comfortable.Value)
	fmt.Printf("past %s = %s, next binds %s\n", ch.Past.Key, ch.Past.Value, ch.Next.Throttle)
	// Output:
	// binds first: connections web→api, 2 slots held 111ms each: at most 18.0 requests/s, saturating at 20.0 users
	// the load peaks at 50 users: saturated true
	// simulated: 1.4 s per request waiting for a connection
	// smallest change: raise maxconnection web→api from 2: tier.web.calls.maxconnection = 5 (7 for bursts)
	// past tier.web.calls.maxconnection = 43, next binds CPU api
}

func ExampleParseGoal() {
	goal, err := analysis.ParseGoal("p99<4s,timeouts<0.1%")
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range goal {
		fmt.Printf("%s: %s below %g\n", g.Text, g.Metric, g.Limit)
	}
	// A clause is judged on the one-sided 95% bound across replications.
	mean, upper, ok := goal[0].Judge([]float64{3.1, 3.4, 3.2})
	fmt.Printf("p99 of three replications: mean %.2f s, upper bound %.2f s, met: %v\n", mean, upper, ok)
	// Output:
	// p99 < 4s: p99 below 4
	// timeouts < 0.1%: timeouts below 0.001
	// p99 of three replications: mean 3.23 s, upper bound 3.49 s, met: true
}
