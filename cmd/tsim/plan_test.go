package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// planExp is a small system whose front end's connection limit decides
// whether the goal is met: short enough to simulate a few dozen times.
const planExp = `name = "plan"
seed = 7
duration = "2m"
warmup = "10s"

[load]
users = 40
think = "exp(1s)"
timeout = "3s"

[[tier]]
name = "fe"
cores = 4
worker.max = 400
calls.client = "dotnet"
calls.maxconnection = 2
[[tier.step]]
cpu = "exp(2ms)"
[[tier.step]]
call = "be"

[[tier]]
name = "be"
cores = 4
[[tier.step]]
cpu = "exp(10ms)"
[[tier.step]]
wait = "exp(100ms)"

[[variant]]
name = "as deployed"

[[variant]]
name = "roomy"
set = { "tier.fe.calls.maxconnection" = 32 }
`

const planGoal = "p99<1s,timeouts<0.5%"

// verdicts reads the evaluated points of plan's table: the first searched
// value of each row and whether it met the goal.
func verdicts(t *testing.T, out string) map[int]bool {
	t.Helper()
	row := regexp.MustCompile(`(?m)^ *[0-9]+ │ *([0-9]+) │.*│ *(yes|no[^│]*?) *$`)
	m := map[int]bool{}
	for _, r := range row.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.Atoi(r[1])
		m[v] = r[2] == "yes"
	}
	if len(m) == 0 {
		t.Fatalf("no evaluated points in:\n%s", out)
	}
	return m
}

// TestPlanVaryAgainstBruteForce checks bisection's answer against every
// value of the range: it must be the smallest value that meets the goal.
func TestPlanVaryAgainstBruteForce(t *testing.T) {
	f := writeFile(t, "plan.toml", planExp)
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "plan", f, "--goal", planGoal, "--vary", "tier.fe.calls.maxconnection=1..32", "--duration", "30s", "-o", dir)
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q\n%s", st, errs, out)
	}
	m := regexp.MustCompile(`answer: tier\.fe\.calls\.maxconnection = ([0-9]+), the smallest value`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no answer:\n%s", out)
	}
	answer, _ := strconv.Atoi(m[1])
	if !strings.Contains(out, "search: bisection") {
		t.Errorf("a connection limit was not bisected:\n%s", out)
	}
	if n := len(verdicts(t, out)); n > 8 {
		t.Errorf("bisection over 1..32 evaluated %d points; want about log2(32)+2", n)
	}
	listed := readFile(t, dir+"/plan/plan.png")
	if len(listed) < 10000 {
		t.Errorf("plan.png is %d bytes", len(listed))
	}

	var all []string
	for v := 1; v <= 32; v++ {
		all = append(all, strconv.Itoa(v))
	}
	brute, errs, st := tsimMain(t, nil, "plan", f, "--goal", planGoal, "--vary", "tier.fe.calls.maxconnection="+strings.Join(all, ","),
		"--search", "grid", "--duration", "30s", "-o", t.TempDir(), "--quiet")
	if st != exitOK || errs != "" {
		t.Fatalf("brute force: status %d, stderr %q", st, errs)
	}
	ok := verdicts(t, brute)
	if len(ok) != 32 {
		t.Fatalf("the brute force evaluated %d values, want 32", len(ok))
	}
	smallest := 0
	for v := 32; v >= 1; v-- {
		if ok[v] {
			smallest = v
		}
	}
	if smallest != answer {
		t.Errorf("plan answered %d; the smallest value of 1..32 that meets the goal is %d\n%s", answer, smallest, brute)
	}
	if answer < 2 || answer > 16 {
		t.Errorf("answer %d: the test file should need a few connections, not the edge of the range", answer)
	}
}

// TestPlanFindUsersAgainstBruteForce checks the most users the roomy
// variant holds against a grid of user counts.
func TestPlanFindUsersAgainstBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("a search and a brute-force sweep of the same users, the longest test of cmd/tsim (-short)")
	}
	f := writeFile(t, "plan.toml", planExp)
	out, errs, st := tsimMain(t, nil, "plan", f, "--variant", "roomy", "--goal", planGoal, "--find", "users", "--duration", "30s", "-o", t.TempDir())
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q\n%s", st, errs, out)
	}
	m := regexp.MustCompile(`answer: the configuration holds ([0-9]+) users within the goal; at ([0-9]+) it misses`).FindStringSubmatch(unwrap(out))
	if m == nil {
		t.Fatalf("no answer:\n%s", out)
	}
	answer, _ := strconv.Atoi(m[1])
	if answer <= 40 {
		t.Fatalf("answer %d: the roomy variant should hold more than the file's 40 users", answer)
	}

	// The grid: every 50 users up to twice the answer, and the answer and
	// the next count.
	vals := map[int]bool{answer: true, answer + 1: true}
	for u := 50; u <= 2*answer; u += 50 {
		vals[u] = true
	}
	var list []string
	for u := 1; u <= 2*answer+1; u++ {
		if vals[u] {
			list = append(list, strconv.Itoa(u))
		}
	}
	brute, errs, st := tsimMain(t, nil, "plan", f, "--variant", "roomy", "--goal", planGoal, "--vary", "load.users="+strings.Join(list, ","),
		"--duration", "30s", "-o", t.TempDir(), "--quiet")
	if st != exitOK || errs != "" {
		t.Fatalf("brute force: status %d, stderr %q", st, errs)
	}
	ok := verdicts(t, brute)
	largest := 0
	for u, good := range ok {
		if good && u > largest {
			largest = u
		}
	}
	if largest != answer || ok[answer+1] {
		t.Errorf("plan answered %d; in the grid the most users that meet the goal is %d (and %d meets it: %v)\n%s", answer, largest, answer+1, ok[answer+1], brute)
	}
	for u, good := range ok {
		if u < answer && !good {
			t.Errorf("%d users miss the goal though %d meet it: the goal is not monotone here", u, answer)
		}
	}
}

func TestPlanNothingMeetsTheGoal(t *testing.T) {
	f := writeFile(t, "plan.toml", planExp)
	out, _, st := tsimMain(t, nil, "plan", f, "--goal", "p99<10ms", "--vary", "tier.fe.calls.maxconnection=1..64", "--duration", "30s", "--reps", "2", "-o", t.TempDir())
	if st != exitFailure || !strings.Contains(out, "no answer: nothing in 1..64 meets the goal") {
		t.Errorf("status %d:\n%s", st, out)
	}
	if n := len(verdicts(t, out)); n != 1 {
		t.Errorf("%d points evaluated; the top of the range missing is enough", n)
	}
}

func TestPlanGridOfTwoKeys(t *testing.T) {
	f := writeFile(t, "plan.toml", planExp)
	out, errs, st := tsimMain(t, nil, "plan", f, "--goal", planGoal, "--vary", "tier.fe.calls.maxconnection=2..8",
		"--vary", "tier.be.cores=1,2,4", "--duration", "30s", "-o", t.TempDir(), "--quiet")
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q\n%s", st, errs, out)
	}
	if !strings.Contains(out, "search: grid of 21 points") || !strings.Contains(out, "cheapest = smallest in the first key") {
		t.Errorf("not a 7 × 3 grid:\n%s", out)
	}
	row := regexp.MustCompile(`(?m)^ *[0-9]+ │ *([0-9]+) │ *([0-9]+) │.*│ *(yes|no[^│]*?) *$`)
	best := [2]int{}
	for _, r := range row.FindAllStringSubmatch(out, -1) {
		c, _ := strconv.Atoi(r[1])
		k, _ := strconv.Atoi(r[2])
		if r[3] == "yes" && (best[0] == 0 || c < best[0] || c == best[0] && k < best[1]) {
			best = [2]int{c, k}
		}
	}
	want := "answer: tier.fe.calls.maxconnection = " + strconv.Itoa(best[0]) + ", tier.be.cores = " + strconv.Itoa(best[1])
	if best[0] == 0 || !strings.Contains(unwrap(out), want) {
		t.Errorf("want %q:\n%s", want, out)
	}
}

func TestPlanUsage(t *testing.T) {
	f := writeFile(t, "plan.toml", planExp)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"plan"}, "tsim plan: no experiment file given\n"},
		{[]string{"plan", f, "--vary", "k=1..2"}, "tsim plan: no --goal given"},
		{[]string{"plan", f, "--goal", "p99<1s"}, "tsim plan: nothing to search"},
		{[]string{"plan", f, "--goal", "p99<1s", "--find", "users", "--vary", "k=1..2"}, "tsim plan: --find searches the load"},
		{[]string{"plan", f, "--goal", "p99<1s", "--find", "cores"}, "tsim plan: --find must be users or rate"},
		{[]string{"plan", f, "--goal", "p99<1s", "--find", "users", "--users", "5"}, "tsim plan: --find users searches the load"},
		{[]string{"plan", f, "--goal", "p99<1s", "--vary", "k=1..2", "--users", "5", "--rate", "3"}, "tsim plan: --users and --rate"},
		{[]string{"plan", f, "--goal", "p99>1s", "--vary", "k=1..2"}, "tsim plan: goal clause \"p99>1s\""},
		{[]string{"plan", f, "--goal", "p99<1s", "--vary", "k=a,b", "--search", "bisect"}, "tsim plan: --search bisect needs"},
	} {
		out, errs, st := tsimMain(t, nil, tc.args...)
		if st != exitUsage || !strings.HasPrefix(errs, tc.msg) || out != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and %q", tc.args, st, out, errs, tc.msg)
		}
	}
	_, errs, st := tsimMain(t, nil, "plan", f, "--goal", "p99<1s", "--vary", "tier.fe.nope=1..4")
	if st != exitFailure || !strings.Contains(errs, `tsim plan: --vary: unknown key "tier.fe.nope"`) {
		t.Errorf("unknown key: status %d, stderr %q", st, errs)
	}
	_, errs, st = tsimMain(t, nil, "plan", f, "--goal", "p99<1s", "--find", "rate")
	if st != exitFailure || !strings.Contains(errs, "the load is closed") {
		t.Errorf("--find rate on a closed load: status %d, stderr %q", st, errs)
	}
}
