package format

import (
	"github.com/tsim-dev/tsim/model"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestScenarioWith(t *testing.T) {
	x := loadFile(t, "crack-throttling.toml")
	webCall := func(top *model.Topology) *model.Call {
		for _, st := range top.Tiers[0].Steps {
			if st.Kind == model.StepCall {
				return st.Call
			}
		}
		t.Fatal("web has no call")
		return nil
	}

	// Without overrides, a variant is the file's scenario.
	for i, v := range x.Variants {
		sc, err := x.ScenarioWith(v, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := x.Scenario(i)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Index != -1 || !reflect.DeepEqual(sc.Topology, want.Topology) {
			t.Errorf("variant %s: ScenarioWith differs from Scenario(%d)", v, i)
		}
	}

	// A setting over the variant's own.
	sc, err := x.ScenarioWith("fixed", []Param{{Key: "tier.web.calls.maxconnection", Value: "7"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := webCall(&sc.Topology); c.Conn.Limit != 7 || !strings.HasPrefix(c.Conn.Resolution, "7: ") {
		t.Errorf("maxconnection 7: limit %d (%s)", c.Conn.Limit, c.Conn.Resolution)
	}
	if len(sc.Params) != 1 || sc.Variant != "fixed" {
		t.Errorf("scenario %+v", sc)
	}

	// A constant load instead of the schedule: the schedule must go.
	if _, err := x.ScenarioWith("fixed", []Param{{Key: "load.users", Value: "250"}}, nil); err == nil || !strings.Contains(err.Error(), "give either load.users or load.users_schedule") {
		t.Errorf("users with a schedule: %v", err)
	}
	sc, err = x.ScenarioWith("fixed", []Param{{Key: "load.users", Value: "250"}, {Key: "duration", Value: "90s"}}, []string{"load.users_schedule"})
	if err != nil {
		t.Fatal(err)
	}
	if u := sc.Topology.Load.Users; len(u) != 1 || u[0].Value != 250 || sc.Topology.Duration != 90*time.Second {
		t.Errorf("users %v, duration %v", u, sc.Topology.Duration)
	}
	// Unsetting a key the file does not set changes nothing.
	if _, err := x.ScenarioWith("fixed", nil, []string{"load.rate_schedule"}); err != nil {
		t.Errorf("unset of an absent key: %v", err)
	}

	for _, tc := range []struct {
		variant string
		set     []Param
		unset   []string
		want    string
	}{
		{"nope", nil, nil, `no variant "nope" (variants: misconfigured, fixed)`},
		{"fixed", []Param{{Key: "tier.web.colour", Value: "1"}}, nil, `unknown key "tier.web.colour"`},
		{"fixed", []Param{{Key: "tier.web.cores", Value: "many"}}, nil, "tier.web.cores"},
		{"fixed", []Param{{Key: "tier.web.cores", Value: "0"}}, nil, "tier.web.cores"},
		{"fixed", nil, []string{"seed"}, "cannot be set by a variant or sweep"},
		{"fixed", []Param{{Key: "duration", Value: "5s"}, {Key: "warmup", Value: "10s"}}, nil, "warmup"},
	} {
		_, err := x.ScenarioWith(tc.variant, tc.set, tc.unset)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v %v: error %v, want one containing %q", tc.variant, tc.set, tc.unset, err, tc.want)
		}
	}
}

func TestParseValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"8", int64(8)},
		{"0.5", 0.5},
		{"true", true},
		{`"Multiple"`, "Multiple"},
		{"Multiple", "Multiple"},
		{"150ms", "150ms"},
		{"exp(1s)", "exp(1s)"},
		{"[1, 2]", []any{int64(1), int64(2)}},
		{"{a = 1}", "{a = 1}"},
	} {
		if got := ParseValue(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseValue(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}
