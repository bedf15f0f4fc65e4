package tsim_test

import (
	"context"
	"fmt"

	"github.com/tsim-dev/tsim"
)

// shop is a small front end calling a back end through System.Net, the
// way a capacity test of one's own would describe it.
const shop = `name = "shop"
seed = 7
replications = 3
duration = "3m"
warmup = "30s"

[load]
users = 100
think = "exp(10s)"
timeout = "10s"

[[tier]]
name = "web"
preset = "aspnet-classic-net35"
cores = 4
auto_config = false   # processModel autoConfig off: the '*' maxconnection entry below takes effect
calls.maxconnection = 2
[[tier.step]]
cpu = "exp(5ms)"
[[tier.step]]
call = "catalog"

[[tier]]
name = "catalog"
cores = 4
[[tier.step]]
cpu = "exp(10ms)"
[[tier.step]]
wait = "exp(40ms)"
`

// A capacity test as it would sit in a go test: at 500 users, is p99 under
// 2 s with no timeouts, with the default 2 connections and with
// maxconnection 12? In a test, t.Error(err) reports the message.
func Example_capacityTest() {
	exp, err := tsim.LoadBytes("shop.toml", []byte(shop))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, limit := range []string{"2", "12"} {
		res, err := tsim.Run(context.Background(), exp, tsim.Options{Set: []tsim.Param{
			{Key: "load.users", Value: "500"},
			{Key: "tier.web.calls.maxconnection", Value: limit},
		}})
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := res.Check("p99<2s,timeouts=0"); err != nil {
			fmt.Printf("maxconnection %s fails:\n%v\n", limit, err)
		} else {
			fmt.Printf("maxconnection %s holds 500 users\n", limit)
		}
	}
	// Output:
	// maxconnection 2 fails:
	// variant base: p99 < 2s does not hold: 4.00 s on average, 4.27 s at the 95% confidence bound over 3 replications
	// maxconnection 12 holds 500 users
}

// Run returns every variant's figures with confidence half-widths.
func ExampleRun() {
	exp, err := tsim.LoadBytes("shop.toml", []byte(shop))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := tsim.Run(context.Background(), exp, tsim.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	a := res.Variant("base").Agg
	fmt.Printf("%d replications, goodput %.1f/s ± %.1f, web→catalog limit %d\n",
		res.Replications, a.GoodputPerS, *a.CI.GoodputPerS, a.Calls[1].Limit)
	// Output: 3 replications, goodput 9.7/s ± 0.5, web→catalog limit 2
}
