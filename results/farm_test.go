package results

import (
	"reflect"
	"testing"
)

// TestFoldFarm checks the folding rules, and that every number of a Tier
// and a TierSample is folded (a field added later and forgotten would
// fold to zero).
func TestFoldFarm(t *testing.T) {
	fill := func(v reflect.Value, k float64) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Float64:
				f.SetFloat(k * float64(i+1))
			case reflect.Int, reflect.Int64:
				f.SetInt(int64(k) * int64(i+1))
			}
		}
	}
	var a, b Tier
	fill(reflect.ValueOf(&a).Elem(), 1)
	fill(reflect.ValueOf(&b).Elem(), 3)
	a.Name, b.Name, a.Replicas, b.Replicas = "web#1", "web#2", 0, 0
	a.Cores, b.Cores, a.Completed, b.Completed = 1, 3, 1, 3
	f := FoldFarm("web", []Tier{a, b})
	v := reflect.ValueOf(f)
	for i := 0; i < v.NumField(); i++ {
		if fv := v.Field(i); (fv.Kind() == reflect.Float64 && fv.Float() == 0) || ((fv.Kind() == reflect.Int || fv.Kind() == reflect.Int64) && fv.Int() == 0) {
			t.Errorf("Tier.%s folds to 0", v.Type().Field(i).Name)
		}
	}
	if f.Name != "web" || f.Replicas != 2 || f.Cores != 4 || f.ExecutingMean != a.ExecutingMean+b.ExecutingMean {
		t.Errorf("sums: %+v", f)
	}
	if want := (a.CPUUtil*1 + b.CPUUtil*3) / 4; f.CPUUtil != want {
		t.Errorf("CPU %v, want the core-weighted %v", f.CPUUtil, want)
	}
	if f.ExecTimeMax != max(a.ExecTimeMax, b.ExecTimeMax) || f.ResponseMean != (a.ResponseMean*1+b.ResponseMean*3)/4 {
		t.Errorf("durations: %+v", f)
	}
	var s1, s2 TierSample
	fill(reflect.ValueOf(&s1).Elem(), 1)
	fill(reflect.ValueOf(&s2).Elem(), 2)
	folded, machines := FoldSamples([]TierSample{s1, s1, s2}, []int{1, 2, 2}, []string{"", "web", "web"})
	if len(folded) != 2 || len(machines) != 2 || folded[0] != s1 {
		t.Fatalf("fold of a tier and a farm of 2: %d rows, %d machines", len(folded), len(machines))
	}
	sv := reflect.ValueOf(folded[1])
	for i := 0; i < sv.NumField(); i++ {
		if fv := sv.Field(i); fv.Kind() == reflect.Float64 && fv.Float() == 0 {
			t.Errorf("TierSample.%s folds to 0", sv.Type().Field(i).Name)
		}
	}
	calls, mc := FoldCalls([]Call{{From: "load", To: "web", Limit: 0}, {From: "web#1", To: "be", Limit: 2, Calls: 1, WaitMean: 1}, {From: "web#2", To: "be", Limit: 2, Calls: 3, WaitMean: 2}})
	if len(calls) != 2 || len(mc) != 2 || calls[1].From != "web" || calls[1].Limit != 4 || calls[1].WaitMean != 1.75 {
		t.Errorf("calls %+v", calls)
	}
}
