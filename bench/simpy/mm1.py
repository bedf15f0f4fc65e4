#!/usr/bin/python3
"""M/M/1 benchmark in SimPy 3 (companion to tsim).

lambda=0.9, mu=1.0 (rho=0.9), exponential inter-arrival and service times,
one FCFS server (simpy.Resource, capacity 1). Runs until N customers have
completed (N = argv[1], default 1,000,000) and prints one JSON line.

Usage: /usr/bin/python3 mm1.py [N] [seed]
"""
import json
import random
import sys
import time

import simpy

LAM = 0.9
MU = 1.0


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = random.Random(seed)
    expo = rng.expovariate

    env = simpy.Environment()
    server = simpy.Resource(env, capacity=1)
    done = env.event()
    stats = [0, 0.0]  # completed, sum of response times

    def customer():
        arrive = env.now
        with server.request() as req:
            yield req
            yield env.timeout(expo(MU))
        stats[0] += 1
        stats[1] += env.now - arrive
        if stats[0] == n:
            done.succeed()

    def source():
        timeout = env.timeout
        process = env.process
        while True:
            yield timeout(expo(LAM))
            process(customer())

    t0 = time.perf_counter()
    env.process(source())
    env.run(until=done)
    wall = time.perf_counter() - t0

    # Every scheduled event draws an id from env._eid; the ones still in the
    # queue were never processed. Reading the counter adds no per-event cost.
    events = next(env._eid) - len(env._queue)

    completed, total_resp = stats
    print(json.dumps({
        "model": "mm1",
        "requests": completed,
        "events": events,
        "wall_s": round(wall, 4),
        "requests_per_s": round(completed / wall, 1),
        "us_per_request": round(wall / completed * 1e6, 3),
        "mean_response_s": round(total_resp / completed, 4),
        "theory_mean_response_s": 1.0 / (MU - LAM),
        "simpy_version": simpy.__version__,
    }))


if __name__ == "__main__":
    main()
