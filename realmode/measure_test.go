package realmode

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/simmode"
)

// TestMeasure prints sim-versus-real comparisons of every case at the
// default time scale and at half and twice it. It takes a few minutes, so
// it runs only with TSIM_REAL_MEASURE=1. TSIM_REAL_CASE=name picks one case,
// TSIM_REAL_ONE=1 only the default scale, TSIM_REAL_NOCOMP=1 turns off the
// timer compensation.
func TestMeasure(t *testing.T) {
	if os.Getenv("TSIM_REAL_MEASURE") == "" {
		t.Skip("set TSIM_REAL_MEASURE=1 to measure")
	}
	cases := []struct {
		name string
		top  *model.Topology
	}{
		{"mmc", caseMMc()},
		{"mmc-sharing", caseMMc()},
		{"maxconn-2", caseMaxConn(2)},
		{"maxconn-unlimited", caseMaxConn(0)},
		{"sync", caseSyncAsync(false)},
		{"async", caseSyncAsync(true)},
		{"wcf-throttle", caseWCFThrottle()},
	}
	only := os.Getenv("TSIM_REAL_CASE")
	for _, c := range cases {
		if only != "" && only != c.name {
			continue
		}
		s, err := simmode.Run(c.top, model.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		factors := []float64{1, 0.5, 2}
		if os.Getenv("TSIM_REAL_ONE") != "" {
			factors = factors[:1]
		}
		for _, f := range factors {
			scale := DefaultScale(c.top) * f
			opt := Options{Seed: 1, TimeScale: scale}
			if strings.HasSuffix(c.name, "-sharing") {
				opt.CPU = CPUSharing
			}
			opt.NoTimerCompensation = os.Getenv("TSIM_REAL_NOCOMP") != ""
			r, info, err := RunWithInfo(context.Background(), c.top, opt)
			if err != nil {
				t.Fatal(err)
			}
			rep := Compare(s, r, DefaultTolerances.ForScale(scale))
			fmt.Printf("=== %s scale %.4g (%gx default) real %v slack %v ok=%v\n%s", c.name, scale, f, info.Real.Round(1e6), info.TimerSlack, rep.OK(), rep)
			fmt.Printf("    sim  %+v\n    real %+v\n", s.Requests, r.Requests)
		}
	}
}

// TestMeasureNoise cross-checks every case (cross), which logs the
// simulator's run, the noisy simulation and the real run side by side with
// the noise measured; run it with -v. TSIM_REAL_NOISE=1 runs it,
// TSIM_REAL_CASE=name picks one case, TSIM_REAL_N=n repeats them.
func TestMeasureNoise(t *testing.T) {
	if os.Getenv("TSIM_REAL_NOISE") == "" {
		t.Skip("set TSIM_REAL_NOISE=1 to measure")
	}
	cases := []struct {
		name string
		top  *model.Topology
		cpu  CPUEmulation
	}{
		{"mmc-sharing", caseMMc(), CPUSharing},
		{"mmc", caseMMc(), CPUCores},
		{"maxconn-2", caseMaxConn(2), CPUCores},
		{"maxconn-unlimited", caseMaxConn(0), CPUCores},
		{"sync", caseSyncAsync(false), CPUCores},
		{"async", caseSyncAsync(true), CPUCores},
		{"wcf-throttle", caseWCFThrottle(), CPUCores},
		{"sessions", caseSessions(), CPUCores},
	}
	only := os.Getenv("TSIM_REAL_CASE")
	reps, _ := strconv.Atoi(os.Getenv("TSIM_REAL_N"))
	for range max(reps, 1) {
		for _, c := range cases {
			if only == "" || only == c.name {
				cross(t, c.name, c.top, c.top, Options{CPU: c.cpu}, false)
			}
		}
	}
}
