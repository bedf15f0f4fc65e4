package calibrate

import (
	"fmt"
	"strings"

	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
)

// The counters calibrate reads, per machine. Names are PerfMon's
// (docs/counters.md); objects are matched in any of the names Windows
// registers for them: the versioned ones (ASP.NET v2.0.50727, v4.0.30319,
// ServiceModelService 3.0.0.0, 4.0.0.0) and the version-independent ASP.NET
// and ASP.NET Applications.
const (
	objProcessor     = "Processor"
	objProcessorInfo = "Processor Information"

	cProcessor   = "% Processor Time"
	cReqPerSec   = "Requests/Sec"
	cExecuting   = "Requests Executing"
	cExecTime    = "Request Execution Time"
	cWaitTime    = "Request Wait Time"
	cRejected    = "Requests Rejected"
	cCurrent     = "Requests Current"
	cCallsPerSec = "Calls Per Second"
	cCallsDur    = "Calls Duration"
	cOutstanding = "Calls Outstanding"
	cConnWaiting = "Requests Waiting For A Connection"
)

// machineCounters are the columns (indexes into the capture's counters,
// -1 when absent) calibrate uses for one machine.
type machineCounters struct {
	machine string
	first   int // the machine's first counter, for messages

	cpu int

	// The request rate X, the duration R of the operation and the level
	// N (Little's law: N = X·R), from WCF's counters when the process has
	// them (the operation is what Calls Duration times), else ASP.NET's.
	wcf, aspnet        bool
	rate, dur, level   int
	rateName, durName  string
	levelName          string
	durMS              bool // Request Execution Time is in ms, Calls Duration in s
	rejected           int  // ASP.NET's total of rejected requests: subtracted from the rate
	aspRate            int  // ASP.NET's Requests/Sec, for the callee's time below
	aspWait, aspExec   int  // a caller waits the callee's Request Wait + Execution Time (ASP.NET hosts)
	aspCurrent         int  // or, by Little's law, its Requests Current / Requests/Sec
	connWaiting        int  // tsim Connections: calls waiting for a connection (tsim's own captures)
	wcfObject, aspName string
}

// isASPNet, isASPNetApps and isWCF recognise the objects under any of
// their names.
func isASPNet(obj string) bool { return obj == "ASP.NET" || strings.HasPrefix(obj, "ASP.NET v") }
func isASPNetApps(obj string) bool {
	return obj == "ASP.NET Applications" || strings.HasPrefix(obj, "ASP.NET Apps v")
}
func isWCF(obj string) bool { return strings.HasPrefix(obj, "ServiceModelService ") }

// findCounters picks a machine's columns. t is the tier the machine stands
// for, whose .NET version says which of several versioned objects to
// prefer. It returns an error naming the header when the machine lacks a
// counter calibrate needs, or has two services it cannot tell apart.
func (c *Capture) findCounters(machine string, t results.Tier) (*machineCounters, error) {
	m := &machineCounters{machine: machine, first: -1, cpu: -1, rate: -1, dur: -1, level: -1, rejected: -1, aspRate: -1, aspWait: -1, aspExec: -1, aspCurrent: -1, connWaiting: -1}
	var idx []int
	for k, p := range c.Counters {
		if strings.EqualFold(p.Machine, machine) {
			idx = append(idx, k)
		}
	}
	if len(idx) == 0 {
		if c.hasMachine(machine) {
			return nil, fmt.Errorf("%s:%d:1: machine %s (tier %s) has none of the counters calibrate reads (the processor's, ASP.NET's, WCF's); %s; if the capture names them in a language calibrate does not know, give their English names with --names FILE (docs/field-calibrate.md)",
				c.File, c.headRow, shortName(machine), t.Name, recordHint(machine, t, true, true))
		}
		return nil, fmt.Errorf("%s:%d:1: no counter of machine %s in the header (machines: %s)", c.File, c.headRow, shortName(machine), c.machineList())
	}
	m.first = idx[0]
	aspWant, appsWant, wcfWant := report.PerfmonObjects(t.DotNet)
	// pick returns the column of counter name in the object that pred
	// accepts, preferring the object named want, then the
	// version-independent name, with an instance accepted by inst.
	pick := func(pred func(string) bool, want, plain, name string, inst func(string) bool) int {
		best, rank := -1, 0
		for _, k := range idx {
			p := c.Counters[k]
			if !pred(p.Object) || p.Counter != name || !inst(p.Instance) {
				continue
			}
			r := 1
			switch p.Object {
			case want:
				r = 3
			case plain:
				r = 2
			}
			if r > rank {
				best, rank = k, r
			}
		}
		return best
	}
	none := func(s string) bool { return s == "" }
	total := func(s string) bool { return s == "_Total" }
	m.cpu = pick(func(o string) bool { return o == objProcessor }, objProcessor, "", cProcessor, total)
	if m.cpu < 0 {
		// Processor Information(_Total): the same share of all the
		// logical processors, under the object current Windows favours.
		m.cpu = pick(func(o string) bool { return o == objProcessorInfo }, objProcessorInfo, "", cProcessor, total)
	}

	// ASP.NET Applications: __Total__, or the one application the capture has.
	appsInst := func(s string) bool { return s == "__Total__" }
	if pick(isASPNetApps, appsWant, "ASP.NET Applications", cReqPerSec, appsInst) < 0 {
		var insts []string
		for _, k := range idx {
			if p := c.Counters[k]; isASPNetApps(p.Object) && p.Counter == cReqPerSec {
				insts = append(insts, p.Instance)
			}
		}
		if len(insts) == 1 {
			appsInst = func(s string) bool { return s == insts[0] }
		}
	}
	m.aspRate = pick(isASPNetApps, appsWant, "ASP.NET Applications", cReqPerSec, appsInst)
	aspExecuting := pick(isASPNetApps, appsWant, "ASP.NET Applications", cExecuting, appsInst)
	m.aspExec = pick(isASPNet, aspWant, "ASP.NET", cExecTime, none)
	m.aspWait = pick(isASPNet, aspWant, "ASP.NET", cWaitTime, none)
	m.rejected = pick(isASPNet, aspWant, "ASP.NET", cRejected, none)
	m.aspCurrent = pick(isASPNet, aspWant, "ASP.NET", cCurrent, none)
	m.aspnet = m.aspRate >= 0 && m.aspExec >= 0

	// ServiceModelService: one service per machine.
	var services []string
	for _, k := range idx {
		p := c.Counters[k]
		if isWCF(p.Object) && p.Counter == cCallsPerSec && !contains(services, p.Instance) {
			services = append(services, p.Instance)
		}
	}
	if len(services) > 1 {
		return nil, fmt.Errorf("%s: machine %s has %d WCF services (%s); calibrate reads one service per machine: keep one in the capture (relog -c)",
			c.head(m.first), machine, len(services), strings.Join(services, ", "))
	}
	if len(services) == 1 {
		inst := func(s string) bool { return s == services[0] }
		rate := pick(isWCF, wcfWant, "", cCallsPerSec, inst)
		dur := pick(isWCF, wcfWant, "", cCallsDur, inst)
		if rate >= 0 && dur >= 0 {
			m.wcf = true
			m.rate, m.dur, m.level = rate, dur, pick(isWCF, wcfWant, "", cOutstanding, inst)
			m.rateName, m.durName, m.levelName = cCallsPerSec, cCallsDur, cOutstanding
			m.wcfObject = c.Counters[rate].Object + "(" + services[0] + ")"
		}
	}
	if !m.wcf && m.aspnet {
		m.rate, m.dur, m.level = m.aspRate, m.aspExec, aspExecuting
		m.rateName, m.durName, m.levelName = cReqPerSec, cExecTime, cExecuting
		m.durMS = true
	}
	if m.aspnet {
		m.aspName = c.Counters[m.aspExec].Object
	}
	m.connWaiting = pick(func(o string) bool { return o == "tsim Connections" }, "tsim Connections", "", cConnWaiting, func(s string) bool { return s == "_Total_" })

	var missing []string
	if m.cpu < 0 {
		missing = append(missing, `\\`+machine+`\Processor(_Total)\`+cProcessor+` (or Processor Information(_Total))`)
	}
	if m.rate < 0 {
		missing = append(missing, fmt.Sprintf(`a request rate and a duration: \\%s\%s(__Total__)\%s with \\%s\%s\%s (ASP.NET), or \\%s\%s(SERVICE)\%s with \%s (WCF)`,
			machine, appsWant, cReqPerSec, machine, aspWant, cExecTime, machine, wcfWant, cCallsPerSec, cCallsDur))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: machine %s (tier %s) lacks %s; calibrate needs, for every tier it calibrates, %% Processor Time, a request rate and the operation's duration; %s",
			c.head(m.first), shortName(machine), t.Name, strings.Join(missing, "; and "), recordHint(machine, t, m.cpu < 0, m.rate < 0))
	}
	return m, nil
}

// recordHint says how to record what a tier's machine lacks: a typeperf
// command line of those counters (docs/field-calibrate.md has the whole
// set, for logman too).
func recordHint(machine string, t results.Tier, cpu, rate bool) string {
	asp, apps, wcf := report.PerfmonObjects(t.DotNet)
	var paths []string
	if cpu {
		paths = append(paths, `"\Processor(_Total)\`+cProcessor+`"`)
	}
	if rate {
		if t.WCF {
			paths = append(paths, `"\`+wcf+`(*)\`+cCallsPerSec+`"`, `"\`+wcf+`(*)\`+cCallsDur+`"`, `"\`+wcf+`(*)\`+cOutstanding+`"`)
		}
		if !t.WCF || aspnetHostName(t.Host) {
			paths = append(paths, `"\`+apps+`(__Total__)\`+cReqPerSec+`"`, `"\`+apps+`(__Total__)\`+cExecuting+`"`, `"\`+asp+`\`+cExecTime+`"`)
		}
	}
	return fmt.Sprintf("record them on %s with typeperf -si 1 -f CSV -o capture.csv %s (docs/field-calibrate.md, \"Recording a capture\", has the whole set and the logman line)",
		shortName(machine), strings.Join(paths, " "))
}

func aspnetHostName(h string) bool { return h == "aspnet-classic" || h == "iis-integrated" }

// hasMachine reports whether the capture's header names machine m, with
// any counter.
func (c *Capture) hasMachine(m string) bool { return c.machineSet[strings.ToLower(m)] != "" }

// columns are the capture's columns m reads.
func (m *machineCounters) columns() []int {
	var out []int
	for _, k := range []int{m.cpu, m.rate, m.dur, m.level, m.rejected, m.aspRate, m.aspWait, m.aspExec, m.aspCurrent, m.connWaiting} {
		if k >= 0 {
			out = append(out, k)
		}
	}
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// mirror drops the columns m has that the capture's machine o lacks, so
// that the estimator reads a simulated run as it read the capture.
func (m *machineCounters) mirror(o *machineCounters) {
	for _, p := range []struct{ mine, theirs *int }{
		{&m.level, &o.level}, {&m.rejected, &o.rejected}, {&m.aspWait, &o.aspWait},
		{&m.aspCurrent, &o.aspCurrent}, {&m.connWaiting, &o.connWaiting},
	} {
		if *p.theirs < 0 {
			*p.mine = -1
		}
	}
}
