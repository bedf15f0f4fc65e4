#!/usr/bin/python3
"""Closed-loop throttling pipeline benchmark in SimPy 3 (companion to tsim).

100 users, think time exp(mean 1 s). Each request:
  front-end thread (Resource cap 96) -> client connection to back end
  (Resource cap 2) -> back-end CPU (Resource cap 8) for exp(mean 50 ms),
  release CPU, downstream wait exp(mean 100 ms) holding connection and thread,
  release connection, release thread.
The user waits at most 20 s (`yield req_proc | env.timeout(20)`). On timeout
it records a timeout and immediately starts thinking again; the abandoned
request process is NOT cancelled: it keeps queueing for / holding resources
until it finishes (orphaned work). Simulates 3,600 s and prints one JSON line.

Usage: /usr/bin/python3 pipeline.py [sim_seconds] [seed]
"""
import json
import random
import sys
import time

import simpy

USERS = 100
THINK_MEAN = 1.0
THREADS = 96
CONNS = 2
CPUS = 8
CPU_MEAN = 0.050
DOWN_MEAN = 0.100
DEADLINE = 20.0


def main():
    horizon = float(sys.argv[1]) if len(sys.argv) > 1 else 3600.0
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = random.Random(seed)
    expo = rng.expovariate

    env = simpy.Environment()
    threads = simpy.Resource(env, capacity=THREADS)
    conns = simpy.Resource(env, capacity=CONNS)
    cpus = simpy.Resource(env, capacity=CPUS)
    timeout = env.timeout
    process = env.process

    stats = {"completed": 0, "timed_out": 0, "resp_sum": 0.0}

    def request():
        with threads.request() as t:
            yield t
            with conns.request() as c:
                yield c
                with cpus.request() as cpu:
                    yield cpu
                    yield timeout(expo(1.0 / CPU_MEAN))
                # CPU released here
                yield timeout(expo(1.0 / DOWN_MEAN))
            # connection released here, then the thread

    def user():
        while True:
            yield timeout(expo(1.0 / THINK_MEAN))
            start = env.now
            req = process(request())
            res = yield req | timeout(DEADLINE)
            if req in res:
                stats["completed"] += 1
                stats["resp_sum"] += env.now - start
            else:
                stats["timed_out"] += 1  # req keeps running as orphan

    t0 = time.perf_counter()
    for _ in range(USERS):
        process(user())
    env.run(until=horizon)
    wall = time.perf_counter() - t0

    events = next(env._eid) - len(env._queue)
    completed = stats["completed"]
    timed_out = stats["timed_out"]
    requests = completed + timed_out
    print(json.dumps({
        "model": "pipeline",
        "requests": requests,
        "completed": completed,
        "timed_out": timed_out,
        "events": events,
        "throughput_per_s": round(completed / horizon, 4),
        "mean_response_s": round(stats["resp_sum"] / completed, 4) if completed else None,
        "wall_s": round(wall, 4),
        "requests_per_s": round(requests / wall, 1),
        "us_per_request": round(wall / requests * 1e6, 3),
        "theory_throughput_per_s": round(CONNS / (CPU_MEAN + DOWN_MEAN), 4),
        "theory_mean_response_s": round(USERS / (CONNS / (CPU_MEAN + DOWN_MEAN)) - THINK_MEAN, 4),
        "simpy_version": simpy.__version__,
    }))


if __name__ == "__main__":
    main()
