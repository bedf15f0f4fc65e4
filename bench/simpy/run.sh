#!/bin/sh
# Runs both SimPy benchmarks RUNS times (default 5) and prints the medians.
# Usage: bench/simpy/run.sh [mm1_customers] [runs]
# Needs SimPy 3 for the system python: apt-get install -y python3-simpy3
set -eu
DIR=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-/usr/bin/python3}
N=${1:-1000000}
RUNS=${2:-5}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

"$PY" -c 'import simpy, sys; print("simpy", simpy.__version__, "python", sys.version.split()[0])'
i=1
while [ "$i" -le "$RUNS" ]; do
    "$PY" "$DIR/mm1.py" "$N" | tee -a "$OUT"
    i=$((i + 1))
done
i=1
while [ "$i" -le "$RUNS" ]; do
    "$PY" "$DIR/pipeline.py" | tee -a "$OUT"
    i=$((i + 1))
done

"$PY" - "$OUT" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for model in ("mm1", "pipeline"):
    rs = [r for r in rows if r["model"] == model]
    if not rs:
        continue
    med = lambda k: statistics.median(r[k] for r in rs)
    wall = med("wall_s")
    print(json.dumps({
        "model": model,
        "runs": len(rs),
        "requests": rs[0]["requests"],
        "median_wall_s": round(wall, 4),
        "median_requests_per_s": round(med("requests_per_s"), 1),
        "median_us_per_request": round(med("us_per_request"), 3),
        "median_events": med("events"),
        "mean_response_s": rs[0]["mean_response_s"],
        "theory_mean_response_s": rs[0]["theory_mean_response_s"],
    }))
PYEOF
