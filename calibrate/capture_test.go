package calibrate

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

// smallFile is the round trip's system, one minute long, sampled every
// second: a capture of 61 rows of two machines, front (ASP.NET) and back
// (WCF).
var smallFile = strings.Replace(strings.Replace(roundTripFile("kind = \"open\"\nrate = 20", 2), `duration = "20m"`, `duration = "1m"`, 1), `warmup = "1m"`, `warmup = "0s"`, 1)

var smallOnce struct {
	sync.Once
	csv []byte
	x   *format.Experiment
}

// small returns the small system's perfmon.csv and the experiment.
func small(t testing.TB) ([]byte, *format.Experiment) {
	smallOnce.Do(func() {
		l, err := input.LoadData("small.toml", []byte(smallFile), nil)
		if err != nil {
			panic(err)
		}
		x, seed := l.X, uint64(1)
		p, err := runner.NewPlan(l, runner.Options{Seed: &seed, Reps: 1})
		if err != nil {
			panic(err)
		}
		res, err := runner.Execute(context.Background(), p, runner.Sim{}, 1, nil)
		if err != nil {
			panic(err)
		}
		smallOnce.csv, err = report.PerfmonCSV(res)
		if err != nil {
			panic(err)
		}
		smallOnce.x = x
	})
	return append([]byte(nil), smallOnce.csv...), smallOnce.x
}

// records splits a capture into its fields; join writes them back as
// relog does.
func records(t testing.TB, data []byte) [][]string {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func join(recs [][]string) []byte {
	var b bytes.Buffer
	for _, r := range recs {
		for i, f := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		}
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

// col is the column (a byte offset from 1) of field k of a record.
func col(rec []string, k int) int {
	c := 1
	for _, f := range rec[:k] {
		c += len(f) + 2 + strings.Count(f, `"`) + 1
	}
	return c
}

// column finds the header field whose path ends in suffix on machine m.
func column(t testing.TB, head []string, m, suffix string) int {
	for k, f := range head {
		if strings.HasPrefix(f, `\\`+m+`\`) && strings.HasSuffix(f, suffix) {
			return k
		}
	}
	t.Fatalf("no %s column of %s", suffix, m)
	return -1
}

// estimateBytes reads data as capture.csv and estimates the small
// system's demands from it, without simulating.
func estimateBytes(data []byte, x *format.Experiment) (*Result, error) {
	c, err := ParseCapture(data, "capture.csv")
	if err != nil {
		return nil, err
	}
	return Estimate(c, x, []byte(smallFile), nil, Options{Warmup: 0, NoFigure: true})
}

// TestCaptureErrors: every problem of a capture is an error that names
// the file, the line and the column, and says what is allowed.
func TestCaptureErrors(t *testing.T) {
	base, x := small(t)
	if _, err := estimateBytes(base, x); err != nil {
		t.Fatalf("the valid capture: %v", err)
	}
	head := records(t, base)[0]
	cpu := column(t, head, "back", `\% Processor Time`)
	rate := column(t, head, "back", `\Calls Per Second`)
	edit := func(f func(recs [][]string) [][]string) []byte { return join(f(records(t, base))) }
	drop := func(recs [][]string, k int) [][]string {
		for i := range recs {
			recs[i] = append(recs[i][:k:k], recs[i][k+1:]...)
		}
		return recs
	}
	for _, tc := range []struct {
		name string
		data []byte
		at   string // the position the message must start with
		want string // a part of the message
	}{
		{"wrong header", edit(func(r [][]string) [][]string { r[0][0] = "(PDH-CSV 3.0) (GMT Standard Time)(0)"; return r }),
			"capture.csv:1:1: ", `not a PDH CSV file`},
		{"not a counter path", edit(func(r [][]string) [][]string { r[0][3] = `FESERVER1\Processor`; return r }),
			fmt.Sprintf("capture.csv:1:%d: ", col(head, 3)), `does not start with \\MACHINE\`},
		{"missing CPU counter", edit(func(r [][]string) [][]string { return drop(r, cpu) }),
			fmt.Sprintf("capture.csv:1:%d: ", col(head, column(t, head, "back", `\Calls Duration`))-len(head[cpu])-3), `machine back (tier back) lacks \\back\Processor(_Total)\% Processor Time`},
		{"missing rate counter", edit(func(r [][]string) [][]string { return drop(r, rate) }),
			fmt.Sprintf("capture.csv:1:%d: ", col(head, cpu)), `machine back (tier back) lacks a request rate`},
		{"non-numeric cell", edit(func(r [][]string) [][]string { r[20][rate] = "12,5"; return r }),
			fmt.Sprintf("capture.csv:21:%d: ", col(records(t, base)[20], rate)), `bad value "12,5"`},
		{"negative value", edit(func(r [][]string) [][]string { r[30][cpu] = "-3"; return r }),
			fmt.Sprintf("capture.csv:31:%d: ", col(records(t, base)[30], cpu)), `negative value -3; counters are never negative`},
		{"CPU above 100", edit(func(r [][]string) [][]string { r[30][cpu] = "180"; return r }),
			fmt.Sprintf("capture.csv:31:%d: ", col(records(t, base)[30], cpu)), `180 above 100`},
		{"time going back", edit(func(r [][]string) [][]string { r[10][0], r[11][0] = r[11][0], r[10][0]; return r }),
			"capture.csv:12:1: ", `time 01/01/2024 00:00:09.000 is not after the previous row's`},
		{"a bad time", edit(func(r [][]string) [][]string { r[10][0] = "2024-01-01 00:00:09"; return r }),
			"capture.csv:11:1: ", `bad time "2024-01-01 00:00:09" (want MM/DD/YYYY HH:MM:SS.mmm)`},
		{"a counter twice", edit(func(r [][]string) [][]string {
			for i := range r {
				r[i] = append(r[i], r[i][cpu])
			}
			return r
		}), fmt.Sprintf("capture.csv:1:%d: ", col(head, len(head))), fmt.Sprintf(`appears twice (also column %d of the header)`, col(head, cpu))},
		{"a short row", append(join(records(t, base)[:5]), []byte(`"01/01/2024 00:00:05.000","1"`+"\r\n")...),
			"capture.csv:6:", `wrong number of fields`},
		{"an unbalanced quote", append(join(records(t, base)[:5]), []byte("\"01/01/2024 00:00:05.000,\"1\"\r\n")...),
			"capture.csv:6:", `quote`},
		{"too few samples", join(records(t, base)[:12]),
			"capture.csv:1:1: ", `10 samples of machine front after the warm-up of 0 s (its samples span 10 s); calibrate needs at least 30`},
		{"no rows", join(records(t, base)[:1]),
			"capture.csv:1:1: ", `0 sample rows; a capture needs at least two`},
		{"no machine of the experiment", []byte(strings.ReplaceAll(strings.ReplaceAll(string(base), `\\front\`, `\\fe\`), `\\back\`, `\\be\`)),
			"capture.csv:1:1: ", `no machine of the capture (fe, be) is a tier of small.toml (front, back); map them with --map MACHINE=TIER`},
		{"a blank rate throughout", edit(func(r [][]string) [][]string {
			for i := 1; i < len(r); i++ {
				r[i][rate] = " "
			}
			return r
		}), fmt.Sprintf("capture.csv:1:%d: ", col(head, rate)), `values in 0 of the window's 60 rows; calibrate needs at least 30`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := estimateBytes(tc.data, x)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tc.at) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n  %v\nwant it to start with %q and say %q", err, tc.at, tc.want)
			}
		})
	}
}

// TestCaptureNames: a real capture names its objects otherwise than tsim
// does, and calibrate reads them all.
func TestCaptureNames(t *testing.T) {
	base, x := small(t)
	want, err := estimateBytes(base, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"version-free ASP.NET objects", `\ASP.NET Apps v2.0.50727(__Total__)\`, `\ASP.NET Applications(__Total__)\`},
		{"version-free ASP.NET", `\ASP.NET v2.0.50727\`, `\ASP.NET\`},
		{"machines in capitals", `\\back\`, `\\BACK\`},
		{"an application instead of __Total__", `(__Total__)`, `(_LM_W3SVC_1_ROOT)`},
		{"a WCF service of its own name", `(back@http:||back|back.svc)`, `(Conversion@http:||co1wacwb201|Conversion.svc)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(strings.ReplaceAll(string(base), tc.from, tc.to))
			if bytes.Equal(data, base) {
				t.Fatalf("%q not in the capture", tc.from)
			}
			got, err := estimateBytes(data, x)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range got.Tiers {
				if e.StepCPU != want.Tiers[i].StepCPU || e.Wait != want.Tiers[i].Wait {
					t.Errorf("%s: CPU %v wait %v, want %v and %v", e.Tier, e.StepCPU, e.Wait, want.Tiers[i].StepCPU, want.Tiers[i].Wait)
				}
			}
		})
	}
}

// FuzzCapture feeds calibrate arbitrary captures: it never panics, a
// capture it refuses is refused with the file's name and a position, and
// one it accepts gives a calibrated experiment that loads (Estimate loads
// it back). go test runs the seeds; go test -fuzz FuzzCapture ./calibrate
// searches.
func FuzzCapture(f *testing.F) {
	base, x := small(f)
	recs := records(f, base)
	f.Add(base)
	f.Add(join(recs[:3]))
	f.Add(join(recs[:40]))
	f.Add([]byte(`"(PDH-CSV 4.0) (GMT Standard Time)(0)","\\m\Processor(_Total)\% Processor Time"` + "\r\n" + `"01/01/2024 00:00:00.000"," "` + "\r\n"))
	f.Add([]byte("\xef\xbb\xbf" + string(base)))
	f.Add([]byte(strings.ReplaceAll(string(base), `"0"`, `"1e308"`)))
	f.Add([]byte(strings.ReplaceAll(string(base), `"0"`, `" "`)))
	f.Add([]byte(strings.ReplaceAll(string(base), `(__Total__)`, `(a)(b)`)))
	f.Add([]byte(""))
	f.Add([]byte(`"(PDH-CSV 4.0) (x)(-60)"`))
	pos := regexp.MustCompile(`^(capture\.csv:[0-9]+:[0-9]+: |capture\.csv: )`)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		r, err := estimateBytes(data, x)
		if err != nil {
			if !pos.MatchString(err.Error()) {
				t.Fatalf("an error without the file and position: %v", err)
			}
			return
		}
		if len(r.Calibrated) == 0 {
			t.Fatal("accepted, and nothing to write")
		}
		var b bytes.Buffer
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
	})
}

func BenchmarkEstimate(b *testing.B) {
	base, x := small(b)
	for b.Loop() {
		if _, err := estimateBytes(base, x); err != nil {
			b.Fatal(err)
		}
	}
}
