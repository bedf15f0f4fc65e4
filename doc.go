// Package tsim predicts how a multi-tier request/reply system behaves under
// its throttles — .NET's per-host connection limit, the CLR thread pool and
// its slow thread injection, ASP.NET admission, WCF throttles and
// instancing, timeouts that leave orphaned work — by simulating it, or by
// running the same topology for real on loopback.
//
// This package is the library surface of the tsim command: load an
// experiment file, run it with options, read typed results with confidence
// intervals, and check a goal, so that a capacity question can live in an
// ordinary go test:
//
//	exp, err := tsim.Load("testdata/shop.toml")
//	...
//	res, err := tsim.Run(ctx, exp, tsim.Options{
//		Replications: 3,
//		Set: []tsim.Param{{Key: "load.users", Value: "500"}},
//	})
//	...
//	if err := res.Check("p99<2s,timeouts=0"); err != nil {
//		t.Error(err)
//	}
//
// The experiment format is documented in docs/experiment-format.md; the
// packages beneath this one are described in docs/architecture.md. Package
// tsim imports them (format, runner, analysis, report, results, realmode)
// and is imported by none of them.
package tsim
