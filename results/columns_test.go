package results

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// checkColumns checks that cols reach every number of T once, that each
// name is the field's JSON key, and that every rule is one its direction
// knows.
func checkColumns[T any](t *testing.T, cols []Column[T], dirs string) {
	t.Helper()
	var row T
	base := uintptr(unsafe.Pointer(&row))
	typ := reflect.TypeOf(row)
	byOffset := map[uintptr]reflect.StructField{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Type.Kind() {
		case reflect.Float64, reflect.Int, reflect.Int64:
			byOffset[f.Offset] = f
		}
	}
	seen := map[string]bool{}
	for _, c := range cols {
		var p unsafe.Pointer
		n := 0
		if c.F != nil {
			p, n = unsafe.Pointer(c.F(&row)), n+1
		}
		if c.I != nil {
			p, n = unsafe.Pointer(c.I(&row)), n+1
		}
		if c.N != nil {
			p, n = unsafe.Pointer(c.N(&row)), n+1
		}
		if n != 1 {
			t.Errorf("%s: column %q reaches its field %d ways", typ.Name(), c.Name, n)
			continue
		}
		f, ok := byOffset[uintptr(p)-base]
		if !ok {
			t.Errorf("%s: column %q reaches no number of it", typ.Name(), c.Name)
			continue
		}
		if seen[f.Name] {
			t.Errorf("%s.%s has two columns", typ.Name(), f.Name)
		}
		seen[f.Name] = true
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if c.Name != "" && c.Name != tag || c.Name == "" && tag != "-" {
			t.Errorf("%s.%s: column named %q, JSON key %q", typ.Name(), f.Name, c.Name, tag)
		}
		rules := map[byte]Rule{'r': c.Runs, 'm': c.Machines, 'i': c.Intervals}
		for _, d := range []byte(dirs) {
			r := rules[d]
			switch {
			case c.F == nil && r.Op != First && r.Op != Total && r.Op != Later:
				t.Errorf("%s.%s: a count combines by %d in direction %c; counts are kept or added", typ.Name(), f.Name, r.Op, d)
			case r.Op == Weighted && r.By == ByNone:
				t.Errorf("%s.%s: weighted by nothing", typ.Name(), f.Name)
			case r.Op == Later && d != 'i':
				t.Errorf("%s.%s: Later outside intervals", typ.Name(), f.Name)
			}
		}
	}
	for _, f := range byOffset {
		if !seen[f.Name] {
			t.Errorf("%s.%s has no column: every way of combining %ss would drop it", typ.Name(), f.Name, typ.Name())
		}
	}
}

func TestColumnsCoverEveryNumber(t *testing.T) {
	checkColumns(t, TierColumns, "rm")
	checkColumns(t, SampleColumns, "mi")
	checkColumns(t, CallColumns, "rm")
	checkColumns(t, BalancerColumns, "r")
	checkColumns(t, LatencyColumns, "r")
	checkColumns(t, BreakdownColumns, "r")
}

// The rules across replications, by hand on two tiers.
func TestMeanTiers(t *testing.T) {
	a := Tier{Name: "be", Cores: 4, Host: "self", CPUUtil: 0.2, ExecutingMax: 3, Arrived: 10, ExecTimeMean: 0.5, Completed: 0, ResponseMean: 9}
	b := Tier{Name: "be", Cores: 4, Host: "self", CPUUtil: 0.4, ExecutingMax: 5, Arrived: 0, ExecTimeMean: 7, Completed: 2, ResponseMean: 1}
	m := MeanTiers([][]Tier{{a}, {b}})[0]
	switch {
	case m.Name != "be" || m.Cores != 4 || m.Host != "self":
		t.Errorf("names and settings: %+v", m)
	case m.CPUUtil != a.CPUUtil/2+b.CPUUtil/2 || m.ExecutingMax != 5 || m.Arrived != 10 || m.Completed != 2:
		t.Errorf("means, maxima, sums: %+v", m)
	case m.ExecTimeMean != 0.5:
		t.Errorf("execution time %v: want the mean over replications with arrivals, 0.5", m.ExecTimeMean)
	case m.ResponseMean != 1:
		t.Errorf("response %v: want the mean over replications that completed, 1", m.ResponseMean)
	}
}
