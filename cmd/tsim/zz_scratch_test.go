package main

import (
	"fmt"
	"testing"

	"github.com/tsim-dev/tsim/model"
)

func TestScratch(t *testing.T) {
	x, err := loadExperiment("../../experiments/crack-throttling.toml")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < x.NumScenarios(); i++ {
		sc, _ := x.Scenario(i)
		a := model.Analyse(&sc.Topology)
		fmt.Printf("%s D=%v Z=%v users=%v rate=%v max=%v demand=%v sat=%v at=%v\n", sc.Variant, a.D, a.Z, a.Users, a.Rate, a.MaxPerSec, a.Demand, a.Saturated, a.SaturatesAt)
		for _, b := range a.Bounds {
			fmt.Printf("  %-45s %-14s %-8s lim=%v hold=%v persec=%.2f users=%.1f note=%q\n", b.Throttle, b.Kind, b.Tier, b.Limit, b.Hold, b.PerSec, b.Users, b.Note)
		}
	}
}
