package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// perfmonExperiment runs a small story in two variants: an ASP.NET 3.5
// front end calling a WCF 3.5 service through two connections (one
// variant: twenty), the service calling a plain back end.
func perfmonExperiment(t *testing.T) *results.Experiment {
	t.Helper()
	pool := model.Pool{Min: 8, Max: 100, Injection: model.InjectCLR, GateDelay: 500 * time.Millisecond}
	top := func(conns int) *model.Topology {
		return &model.Topology{
			Duration: time.Minute, SampleEvery: 2 * time.Second,
			Tiers: []model.Tier{
				{Name: "web", Host: model.HostASPNetClassic, DotNet: "3.5", Cores: 2, CostMultiplier: 1, Worker: pool, IO: pool,
					Admission: model.Admission{Kind: model.AdmitClassic, MinFreeThreads: 88, QueueLimit: 5000},
					Steps: []model.Step{{Kind: model.StepCPU, Demand: sim.Exp(5 * time.Millisecond)},
						{Kind: model.StepCall, Call: &model.Call{Target: 1, Conn: model.Conn{Limit: conns}}}}},
				{Name: "svc", DotNet: "3.5", Cores: 2, CostMultiplier: 1, Worker: pool, IO: pool,
					WCF: &model.WCF{MaxCalls: 16, MaxSessions: 10, MaxInstances: 26, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple},
					Steps: []model.Step{{Kind: model.StepCPU, Demand: sim.Exp(10 * time.Millisecond)},
						{Kind: model.StepCall, Call: &model.Call{Target: 2}}}},
				{Name: "db", Cores: 2, CostMultiplier: 1, Worker: model.Pool{Max: 1 << 20}, IO: model.Pool{Max: 1 << 20},
					Steps: []model.Step{{Kind: model.StepWait, Demand: sim.Exp(200 * time.Millisecond)}}},
			},
			Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 30}}, Think: sim.Exp(time.Second),
				Call: model.Call{Target: 0, Timeout: 5 * time.Second}},
		}
	}
	x := &results.Experiment{Name: "perfmon", Seed: 1, Replications: 1, Mode: "sim"}
	for i, v := range []struct {
		name  string
		conns int
	}{{"two connections", 2}, {"twenty", 20}} {
		res, err := simmode.Run(top(v.conns), model.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		x.Scenarios = append(x.Scenarios, &results.Scenario{Index: i, Variant: v.name,
			Agg: results.Aggregate{Tiers: res.Tiers, Calls: res.Calls}, First: res})
		x.Finished++
	}
	return x
}

func TestPerfmonCSVMatchesTimeseries(t *testing.T) {
	x := perfmonExperiment(t)
	pm, err := PerfmonCSV(x)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := PerfmonCSV(perfmonExperiment(t))
	if !bytes.Equal(pm, again) {
		t.Fatal("two renderings of one run differ")
	}
	// A strict CSV reader takes it: quoted fields, one count of fields
	// per line, CRLF.
	recs, err := csv.NewReader(bytes.NewReader(pm)).ReadAll()
	if err != nil {
		t.Fatalf("strict CSV: %v", err)
	}
	if !bytes.HasSuffix(pm, []byte("\"\r\n")) || !bytes.HasPrefix(pm, []byte(`"(PDH-CSV 4.0) (GMT Standard Time)(0)","\\web-two-connections\Processor(_Total)\% Processor Time"`)) {
		t.Errorf("not relog's layout: %.120q", pm)
	}
	log, err := ReadPerfmonCSV(bytes.NewReader(pm), "perfmon.csv")
	if err != nil {
		t.Fatal(err)
	}
	if log.TimeZone != "GMT Standard Time" || log.Bias != 0 || len(log.Values) != len(recs)-1 {
		t.Fatalf("read back: zone %q bias %d, %d rows of %d", log.TimeZone, log.Bias, len(log.Values), len(recs)-1)
	}

	// Every path is documented in docs/counters.md, with TIER for the
	// tier's name and INSTANCE for a WCF service's instance.
	doc, err := os.ReadFile("../docs/counters.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := func(c PerfmonCounter) bool {
		tier, _, _ := strings.Cut(c.Machine, "-")
		c.Machine = "TIER"
		c.Instance = strings.ReplaceAll(c.Instance, tier, "TIER")
		if strings.HasPrefix(c.Object, "ServiceModelService") {
			c.Instance = "INSTANCE"
		}
		return bytes.Contains(doc, []byte("`"+c.String()+"`"))
	}
	for _, c := range log.Counters {
		if !documented(c) {
			t.Errorf("%s is not in docs/counters.md (as `%s` with TIER for the tier)", c, c)
		}
	}
	for _, v := range []string{"4.0", "3.5"} {
		a, b, w := PerfmonObjects(v)
		for _, o := range []string{a, b, w} {
			if !bytes.Contains(doc, []byte(o)) {
				t.Errorf("docs/counters.md does not name the object %q (.NET %s)", o, v)
			}
		}
	}

	// Its values are timeseries.csv's, at the same instants.
	ts, err := TimeseriesCSV(x)
	if err != nil {
		t.Fatal(err)
	}
	trecs, err := csv.NewReader(bytes.NewReader(ts)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	colOf := map[string]int{}
	for i, h := range trecs[0] {
		colOf[h] = i
	}
	type key struct{ variant, t, tier string }
	rows := map[key][]string{}
	for _, r := range trecs[1:] {
		rows[key{r[0], r[1], r[2]}] = r
	}
	k := 1
	checked := 0
	for _, sc := range x.Scenarios {
		for _, tr := range sc.Agg.Tiers {
			hasCalls := tr.Name != "db"
			for _, c := range PerfmonColumns(machineName(tr.Name, sc.Variant, 2), tr, hasCalls) {
				if recs[0][k] != c.Path.String() {
					t.Fatalf("column %d is %s, want %s", k, recs[0][k], c.Path)
				}
				ci, ok := colOf[c.Column]
				if !ok {
					t.Fatalf("%s: timeseries.csv has no column %q", c.Path, c.Column)
				}
				for i, rec := range recs[1:] {
					at := log.Times[i].Sub(PerfmonEpoch).Seconds()
					tr := rows[key{sc.Variant, csvFloat(at), tr.Name}]
					if tr == nil {
						t.Fatalf("timeseries.csv has no row for %s at %v s", sc.Variant, at)
					}
					if rec[k] != tr[ci] {
						t.Errorf("%s at %v s: perfmon.csv %q, timeseries.csv %s %q", c.Path, at, rec[k], c.Column, tr[ci])
					}
					checked++
				}
				k++
			}
		}
	}
	if k != len(recs[0]) || checked == 0 {
		t.Errorf("%d columns checked of %d", k-1, len(recs[0])-1)
	}
	// The story shows in the counters: the front end's requests wait for
	// the two connections while executing, its pipelines stay.
	web := log.Column(`\\web-two-connections\ASP.NET Apps v2.0.50727(__Total__)\Requests Executing`)
	pipes := log.Column(`\\web-two-connections\ASP.NET Apps v2.0.50727(__Total__)\Pipeline Instance Count`)
	if web == nil || pipes == nil || web[len(web)-1] < 10 || pipes[len(pipes)-1] < web[len(web)-1] {
		t.Errorf("front end at the end: %v executing, %v pipelines", web, pipes)
	}
}

func TestReadPerfmonCSVRelog(t *testing.T) {
	// A relog capture: a byte order mark, a time zone with a bias, blank
	// values of the first rate sample.
	in := "\xef\xbb\xbf\"(PDH-CSV 4.0) (Pacific Standard Time)(480)\",\"\\\\FESERVER1\\ASP.NET Apps v2.0.50727(__Total__)\\Requests Executing\",\"\\\\FESERVER1\\Processor(_Total)\\% Processor Time\"\r\n" +
		"\"03/14/2009 10:00:00.123\",\"69\",\" \"\r\n" +
		"\"03/14/2009 10:00:15.123\",\"91.5\",\"2.25\"\r\n"
	l, err := ReadPerfmonCSV(strings.NewReader(in), "capture.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := PerfmonCounter{"FESERVER1", "ASP.NET Apps v2.0.50727", "__Total__", "Requests Executing"}
	if l.TimeZone != "Pacific Standard Time" || l.Bias != 480 || l.Counters[0] != want || l.Counters[1].Instance != "_Total" {
		t.Errorf("header: %+v", l)
	}
	if len(l.Values) != 2 || l.Values[0][0] != 69 || !math.IsNaN(l.Values[0][1]) || l.Values[1][1] != 2.25 ||
		l.Times[1].Sub(l.Times[0]) != 15*time.Second {
		t.Errorf("values %v, times %v", l.Values, l.Times)
	}
}

func TestReadPerfmonCSVErrors(t *testing.T) {
	head := `"(PDH-CSV 4.0) (GMT Standard Time)(0)","\\web\Processor(_Total)\% Processor Time"` + "\r\n"
	for _, c := range []struct{ in, want string }{
		{`"time","\\web\Processor(_Total)\% Processor Time"` + "\r\n", "x.csv:1:1: not a PDH CSV file"},
		{`"(PDH-CSV 4.0) (GMT Standard Time)(0)","web\Processor\x"` + "\r\n", `x.csv:1:40: counter path "web\\Processor\\x" does not start with`},
		{`"(PDH-CSV 4.0) (GMT Standard Time)(0)","\\web\Processor"` + "\r\n", "x.csv:1:40: counter path"},
		{head + `"01/01/2024 00:00:01.000","1","2"` + "\r\n", "x.csv:2:"},
		{head + `"2024-01-01 00:00:01","1"` + "\r\n", "x.csv:2:1: bad time"},
		{head + `"01/01/2024 00:00:01.000","x"` + "\r\n", `x.csv:2:27: \\web\Processor(_Total)\% Processor Time: bad value "x"`},
		{head + `"01/01/2024 00:00:01.000","1"` + "\r\n" + `"01/01/2024 00:00:01.000","1"` + "\r\n", "x.csv:3:1: time 01/01/2024 00:00:01.000 is not after"},
		{head + `"01/01/2024 00:00:01.000","1` + "\r\n", "x.csv:"},
	} {
		_, err := ReadPerfmonCSV(strings.NewReader(c.in), "x.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.want)
		}
	}
}
