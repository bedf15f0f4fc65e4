package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// The captures of testdata/real are the small system's perfmon.csv
// rewritten as real Windows machines write their logs, from the formats'
// documentation (relog's and typeperf's PDH CSV and TSV 4.0, PerfMon's
// blank first sample) and the counter names Windows gives in other
// languages (names.go): what a user brings from an incident, not what tsim
// writes. go test ./calibrate -run TestRealCaptures -update writes them.

// realCapture is one file of testdata/real and how it was made.
type realCapture struct {
	file string
	// kind: "CSV" or "TSV"; zone the header's time zone and bias ("" for
	// typeperf's header, which has none); enc "utf8", "bom", "utf16" or
	// "1252".
	kind, zone, enc string
	// objects and counters renamed (English → what the file says).
	names [][2]string
	// extra adds a machine of no tier (SQL01), the per-core and per-node
	// Processor Information instances and a counter calibrate does not read.
	extra bool
	// blankFirst writes PerfMon's first sample: rates blank, levels there.
	blankFirst bool
	// apart logs the second machine half a second after the first, each
	// row of one machine blank for the other (relog merging two logs).
	apart bool
	// gap cuts 20 samples out (the log stopped and restarted: a blank
	// first sample again) and leaves APP01 out of reach for 5 samples.
	gap bool
	// namesFile is read with --names.
	namesFile string
	same      bool // the estimates equal the English capture's exactly
}

var realCaptures = []realCapture{
	{file: "relog-en.csv", kind: "CSV", zone: "(Pacific Standard Time)(480)", enc: "utf8", extra: true, blankFirst: true, same: true,
		names: [][2]string{{`\Processor(`, `\Processor Information(`}, {`ASP.NET v2.0.50727`, `ASP.NET v4.0.30319`}, {`ASP.NET Apps v2.0.50727`, `ASP.NET Apps v4.0.30319`}, {`ServiceModelService 3.0.0.0`, `ServiceModelService 4.0.0.0`}}},
	{file: "relog-de.tsv", kind: "TSV", zone: "(Mitteleuropäische Zeit)(-60)", enc: "1252", blankFirst: true, same: true,
		names: [][2]string{{`\Processor(_Total)\% Processor Time`, `\Prozessor(_Total)\Prozessorzeit (%)`}, {`ASP.NET v2.0.50727`, `ASP.NET`}, {`ASP.NET Apps v2.0.50727`, `ASP.NET Applications`}}},
	{file: "relog-fr.csv", kind: "CSV", zone: "(Paris, Madrid)(-60)", enc: "utf16", extra: true, same: true,
		names: [][2]string{{`\Processor(_Total)\% Processor Time`, `\Informations sur le processeur(_Total)\% temps processeur`}}},
	{file: "typeperf-es.csv", kind: "CSV", zone: "", enc: "1252", same: true,
		names: [][2]string{{`\Processor(_Total)\% Processor Time`, `\Información del procesador(_Total)\% de tiempo de procesador`}}},
	{file: "merged-ru.csv", kind: "CSV", zone: "(Russian Standard Time)(-180)", enc: "bom", apart: true,
		names: [][2]string{{`\Processor(_Total)\% Processor Time`, `\Процессор(_Total)\% загруженности процессора`}}},
	{file: "gaps.csv", kind: "CSV", zone: "(Pacific Standard Time)(480)", enc: "utf8", gap: true, blankFirst: true,
		names: nil},
	{file: "dotnet-xx.csv", kind: "CSV", zone: "(UTC)(0)", enc: "utf8", namesFile: "names-xx.tsv", same: true,
		names: [][2]string{{`ASP.NET Apps v2.0.50727`, `[xx] ASP.NET Apps v2.0.50727`}, {`\Requests/Sec`, `\[xx] Requests/Sec`}, {`\Calls Per Second`, `\[xx] Calls Per Second`}}},
}

// realMachines are the small system's machines as the real files name them.
var realMachines = map[string]string{"front": "WEB01", "back": "APP01"}

// realNames is the names file of dotnet-xx.csv: an invented language
// "xx" (placeholders, not any language's real names) to test the
// mechanism, in the three-column form the registry command writes.
const realNames = "# English<TAB>localized, from Perflib\\009 and Perflib\\CurrentLanguage\r\n" +
	"1000\tASP.NET Apps v2.0.50727\t[xx] ASP.NET Apps v2.0.50727\r\n" +
	"1002\tRequests/Sec\t[xx] Requests/Sec\r\n" +
	"1004\tCalls Per Second\t[xx] Calls Per Second\r\n"

// makeReal writes the small system's capture as rc says.
func makeReal(t *testing.T, rc realCapture) []byte {
	base, _ := small(t)
	recs := records(t, base)
	head := recs[0]
	var keep []int // the fields kept: what a real machine has
	for k := 1; k < len(head); k++ {
		p, what := parsePath(head[k])
		if what != "" {
			t.Fatal(what)
		}
		if strings.HasPrefix(p.Object, "tsim ") {
			continue
		}
		keep = append(keep, k)
	}
	rename := func(f string) string {
		for from, m := range realMachines {
			f = strings.Replace(f, `\\`+from+`\`, `\\`+m+`\`, 1)
		}
		for _, n := range rc.names {
			f = strings.ReplaceAll(f, n[0], n[1])
		}
		return f
	}
	out := [][]string{{strings.TrimSpace("(PDH-" + rc.kind + " 4.0) " + rc.zone)}}
	for _, k := range keep {
		out[0] = append(out[0], rename(head[k]))
	}
	extra := []string{`\\SQL01\Processor Information(_Total)\% Processor Time`, `\\SQL01\Memory\Available MBytes`,
		`\\WEB01\Processor Information(0,_Total)\% Processor Time`, `\\WEB01\Processor Information(0,0)\% Processor Time`}
	if rc.extra {
		out[0] = append(out[0], extra...)
	}
	// rate reports whether the field is a rate (blank in PerfMon's first
	// sample): a level, a count or a time of the last request is not.
	rate := func(f string) bool {
		return strings.Contains(f, "% Processor Time") || strings.HasSuffix(f, "/Sec") || strings.HasSuffix(f, "Per Second")
	}
	machineOf := func(f string) string { p, _ := parsePath(f); return p.Machine }
	for i, r := range recs[1:] {
		if rc.gap && i >= 30 && i < 50 {
			continue // the log stopped
		}
		row := []string{r[0]}
		for _, k := range keep {
			v := r[k]
			if rc.blankFirst && (i == 0 || rc.gap && i == 50) && rate(head[k]) {
				v = " "
			}
			if rc.gap && i >= 10 && i < 15 && machineOf(head[k]) == "back" {
				v = " " // APP01 out of reach
			}
			row = append(row, v)
		}
		if rc.extra {
			row = append(row, "12.5", "2048", "13", "11")
		}
		if !rc.apart {
			out = append(out, row)
			continue
		}
		// Two logs merged: WEB01's samples, then APP01's half a second on.
		a, b := append([]string(nil), row...), append([]string(nil), row...)
		for j, k := range keep {
			if machineOf(head[k]) == "back" {
				a[j+1] = " "
			} else {
				b[j+1] = " "
			}
		}
		b[0] = strings.Replace(b[0], ".000", ".500", 1)
		out = append(out, a, b)
	}
	var buf bytes.Buffer
	sep := ","
	if rc.kind == "TSV" {
		sep = "\t"
	}
	for _, r := range out {
		for i, f := range r {
			if i > 0 {
				buf.WriteString(sep)
			}
			buf.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		}
		buf.WriteString("\r\n")
	}
	text := buf.String()
	switch rc.enc {
	case "bom":
		return append([]byte("\xef\xbb\xbf"), text...)
	case "utf16":
		u := utf16.Encode([]rune(text))
		b := []byte{0xff, 0xfe}
		for _, x := range u {
			b = append(b, byte(x), byte(x>>8))
		}
		return b
	case "1252":
		var b []byte
		for _, r := range text {
			if r >= 0x100 {
				t.Fatalf("%s: %q is not in Windows-1252", rc.file, r)
			}
			b = append(b, byte(r))
		}
		return b
	}
	return []byte(text)
}

// TestRealCaptures: calibrate reads captures as Windows writes them —
// Processor Information, versioned and version-free ASP.NET objects,
// German, French, Spanish and Russian names, TSV, UTF-16 and
// Windows-1252, typeperf's header, PerfMon's blank first sample, several
// machines, machines logged apart, gaps — and estimates from each what
// it estimates from the English capture of the same run.
func TestRealCaptures(t *testing.T) {
	base, x := small(t)
	want, err := estimateBytes(base, x)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/real/names-xx.tsv", []byte(realNames), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rc := range realCaptures {
		t.Run(rc.file, func(t *testing.T) {
			path := filepath.Join("testdata/real", rc.file)
			if *update {
				if err := os.WriteFile(path, makeReal(t, rc), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var user map[string]string
			if rc.namesFile != "" {
				data, err := os.ReadFile(filepath.Join("testdata/real", rc.namesFile))
				if err != nil {
					t.Fatal(err)
				}
				if user, err = ParseNames(data, rc.namesFile); err != nil {
					t.Fatal(err)
				}
			}
			c, err := readCapture(path, user)
			if err != nil {
				t.Fatalf("%v (go test ./calibrate -run TestRealCaptures -update writes it)", err)
			}
			if c.Kind != rc.kind {
				t.Errorf("read as %s, want %s", c.Kind, rc.kind)
			}
			got, err := Estimate(c, x, []byte(smallFile), nil, Options{Warmup: 0, NoFigure: true, Machines: map[string]string{"front": "WEB01", "back": "APP01"}})
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range got.Tiers {
				w := want.Tiers[i]
				if rc.same {
					if e.StepCPU != w.StepCPU || e.Wait != w.Wait || e.Rate != w.Rate {
						t.Errorf("%s: CPU %v wait %v rate %v, want %v, %v and %v (the English capture's)", e.Tier, e.StepCPU, e.Wait, e.Rate, w.StepCPU, w.Wait, w.Rate)
					}
					continue
				}
				// Merged or cut: the same run's means over fewer or
				// shifted intervals; they differ by less than the two
				// confidence intervals together.
				for _, m := range [][3]any{{"CPU", e.StepCPU, w.StepCPU}, {"rate", e.Rate, w.Rate}} {
					g, wm := m[1].(Measure), m[2].(Measure)
					if math.Abs(g.Value-wm.Value) > math.Hypot(g.Half, wm.Half) || math.IsNaN(g.Value) {
						t.Errorf("%s: %s %v, want it within the intervals' of %v (the English capture's)", e.Tier, m[0], g, wm)
					}
				}
			}
			notes := strings.Join(got.Notes, "\n")
			for _, want := range realNotes(rc) {
				if !strings.Contains(notes, want) {
					t.Errorf("no note %q in\n%s", want, notes)
				}
			}
		})
	}
}

// realNotes are notes a real capture's reading must print.
func realNotes(rc realCapture) []string {
	var out []string
	switch rc.enc {
	case "utf16":
		out = append(out, "the capture is UTF-16LE text")
	case "1252":
		out = append(out, "the capture is Windows-1252 text")
	}
	for _, l := range []struct{ name, key string }{{"German", "Prozessor"}, {"French", "processeur"}, {"Spanish", "procesador"}, {"Russian", "Процессор"}} {
		for _, n := range rc.names {
			if strings.Contains(n[1], l.key) {
				out = append(out, "counter names read in "+l.name)
			}
		}
	}
	if rc.gap {
		out = append(out, "machine APP01: 2 gaps in its samples", "machine WEB01: 1 gap in its samples")
	}
	if rc.namesFile != "" {
		out = append(out, "counter names read in the names file")
	}
	return out
}

// TestCaptureMissingSays: a capture that lacks what a tier needs says
// which counters and how to record them.
func TestCaptureMissingSays(t *testing.T) {
	base, x := small(t)
	data := strings.ReplaceAll(string(base), `\Calls Per Second"`, `\Calls Per Minute"`)
	_, err := estimateBytes([]byte(data), x)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"machine back (tier back) lacks a request rate", `typeperf -si 1 -f CSV -o capture.csv "\ServiceModelService 3.0.0.0(*)\Calls Per Second"`, "Recording a capture"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not say %q", err, want)
		}
	}
	// A machine whose counters are all in a language calibrate does not
	// know: it says so, and how to give their names.
	data = strings.ReplaceAll(string(base), `\\back\Processor(_Total)\% Processor Time`, `\\back\Xyz(_Total)\Abc`)
	data = strings.ReplaceAll(data, `ServiceModelService 3.0.0.0`, `Qrs`)
	_, err = estimateBytes([]byte(data), x)
	if err == nil || !strings.Contains(err.Error(), "has none of the counters calibrate reads") || !strings.Contains(err.Error(), "--names FILE") {
		t.Errorf("got %v, want it to say the machine has none of the counters and --names", err)
	}
}

// TestCaptureHostile (issue 22 item 9): calibrate quotes at most a short,
// sanitised excerpt of a capture; a capture that is a symbolic link to
// another file is read as that regular file, and nothing of a file that
// is not a capture is printed; a capture of ten years is refused with
// what to do, not as a bug.
func TestCaptureHostile(t *testing.T) {
	base, x := small(t)
	recs := records(t, base)
	cpu := column(t, recs[0], "back", `\% Processor Time`)
	huge := strings.Repeat("9", 2<<20) + "x"
	secret := "root:$y$j9T$SECRETHASH:19000:0:99999:7:::"
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"a 2 MB cell", func() []byte { r := records(t, base); r[20][cpu] = huge; return join(r) }(), "bad value"},
		{"a 2 MB counter path", func() []byte {
			r := records(t, base)
			r[0][cpu] = `\\` + huge + `\Processor(_Total)\% Processor Time`
			return join(r)
		}(), ""},
		{"a 2 MB first field", func() []byte { r := records(t, base); r[0][0] = "(PDH-CSV 4.0) " + huge; return join(r) }(), "not a PDH CSV file"},
		{"a 2 MB time", func() []byte { r := records(t, base); r[5][0] = huge; return join(r) }(), "bad time"},
		{"control characters", func() []byte { r := records(t, base); r[20][cpu] = "1\x1b[2J\x00\u202e"; return join(r) }(), `bad value "1\x1b[2J\x00\u202e"`},
		{"a password file", []byte(secret + "\nbin:x:2:2::/bin:/usr/sbin/nologin\n"), "not a PDH log"},
		{"a one-line secret with commas", []byte(`"` + secret + `","x"`), "not a PDH log"},
		{"ten years", func() []byte {
			r := records(t, base)
			for i := 1; i < len(r); i++ {
				r[i][0] = fmt.Sprintf("01/01/%04d 00:00:%02d.000", 2014+(i-1)/6, (i-1)%6)
			}
			return join(r)
		}(), "the capture spans 10 years"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := estimateBytes(tc.data, x)
			if err == nil {
				if tc.want == "" {
					return // the machine of the long name is no tier: not read
				}
				t.Fatal("no error")
			}
			msg := err.Error()
			if len(msg) > 600 {
				t.Errorf("a message of %d bytes: %.300s…", len(msg), msg)
			}
			if strings.Contains(msg, "SECRET") || strings.ContainsAny(msg, "\x1b\x00") || strings.Contains(msg, "bug") {
				t.Errorf("message %q", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not say %q", msg, tc.want)
			}
		})
	}
	t.Run("a symbolic link", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "shadow"), []byte(secret+"\n"), 0o600)
		os.WriteFile(filepath.Join(dir, "real.csv"), base, 0o644)
		for _, l := range []struct{ link, target string }{{"secret.csv", "shadow"}, {"capture.csv", "real.csv"}} {
			if err := os.Symlink(l.target, filepath.Join(dir, l.link)); err != nil {
				t.Skip("no symbolic links here:", err)
			}
		}
		_, err := ReadCapture(filepath.Join(dir, "secret.csv"))
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "not a PDH log") {
			t.Errorf("a link to a secret: %v", err)
		}
		if _, err := ReadCapture(filepath.Join(dir, "capture.csv")); err != nil {
			t.Errorf("a link to a capture, read as the regular file it leads to: %v", err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.csv")); err == nil {
			if _, err := ReadCapture(filepath.Join(dir, "zero.csv")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("a link to /dev/zero: %v", err)
			}
		}
	})
}

// TestParseNames: a names file's errors name its line.
func TestParseNames(t *testing.T) {
	got, err := ParseNames([]byte(realNames), "n.tsv")
	if err != nil || got[fold("[xx] requests/sec")] != "Requests/Sec" {
		t.Errorf("got %v, %v", got, err)
	}
	for _, tc := range []struct{ data, want string }{
		{"a\tb\tc\n", "n.tsv:1:1: the first of three fields is not a counter index"},
		{"# x\n\nab\n", "n.tsv:3:1: 1 tab-separated fields"},
		{"a\t \n", "n.tsv:1:1: an empty name"},
		{strings.Repeat("a", 70000) + "\tb\n", "n.tsv:1: a line longer than 64 KiB"},
	} {
		if _, err := ParseNames([]byte(tc.data), "n.tsv"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.20q: %v, want %q", tc.data, err, tc.want)
		}
	}
}

// TestLanguageTable: every name of the table reads as its English name,
// and docs/field-calibrate.md lists them all.
func TestLanguageTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/field-calibrate.md")
	if err != nil {
		t.Fatal(err)
	}
	n := builtinNames()
	for _, l := range languages {
		if !bytes.Contains(doc, []byte(l.name)) {
			t.Errorf("docs/field-calibrate.md does not name %s", l.name)
		}
		for _, p := range append(append([][2]string(nil), l.objects...), l.counters...) {
			if !bytes.Contains(doc, []byte(p[0])) {
				t.Errorf("docs/field-calibrate.md does not list %s's %q", l.name, p[0])
			}
			if e, _ := n.object(strings.ToUpper(p[0])); e != p[1] {
				if e, _ := n.counter(p[0]); e != p[1] {
					t.Errorf("%s %q reads as %q, want %q", l.name, p[0], e, p[1])
				}
			}
		}
	}
}
