#!/usr/bin/env python3
"""How often serve's saturation test fires on a short run, by simulation.

A continuous-batching engine in the shape of llama.cpp's server and
src/core/serve_gen.c: `slots` slots, each step one decode token for every
generating request plus prompt chunks up to `chunk` tokens, a step taking
a + b x decode tokens + c x prompt tokens ms (fitted by eye to the H100's
F16 zoo:llama-3.2-1b at 512 + 128 tokens: about 30 requests/s at most on
32 slots). Poisson arrivals, `requests` a run, ten seeds a rate. For each
run: the pace (the completions' rate over their own span against the
arrivals' over theirs) and the TTFT growth (the median TTFT of the last
quarter of the requests over the first quarter's); a run is saturated
when the pace is below 0.95 and the growth above 2 (IB_GEN_SERVE_SATURATED
and IB_GEN_SERVE_TTFT_GROWTH). docs/serve-generative.md, "The curve",
quotes what it prints:

    python3 scripts/saturation_sim.py
"""
import random
import statistics


def serve(rate, requests=120, slots=32, prompt=512, output=128, a=2.0, b=0.13, c=0.0176, chunk=512, seed=1):
    """Each request's (arrival, first token, end) in ms, in arrival order."""
    rng = random.Random(seed)
    arrival, t = [], 0.0
    for _ in range(requests):
        arrival.append(t)
        t += rng.expovariate(rate) * 1000
    first, end = [None] * requests, [None] * requests
    now, waiting, running, due = 0.0, [], {}, 0
    while due < requests or waiting or running:
        while due < requests and arrival[due] <= now:
            waiting.append(due)
            due += 1
        while waiting and len(running) < slots:
            running[waiting.pop(0)] = {"prompt": prompt, "made": 0}
        if not running:
            now = arrival[due]
            continue
        decoding = [i for i, s in running.items() if s["prompt"] == 0]
        budget, prefilled, prefilling = chunk, 0, []
        for i, s in running.items():
            if s["prompt"] > 0 and budget > 0:
                k = min(budget, s["prompt"])
                s["prompt"] -= k
                budget -= k
                prefilled += k
                prefilling.append((i, s["prompt"] == 0))
        now += a + b * len(decoding) + c * prefilled
        for i in decoding:
            running[i]["made"] += 1
        for i, done in prefilling:
            if done:
                running[i]["made"] += 1
                first[i] = now
        for i in [i for i, s in running.items() if s["made"] >= output]:
            end[i] = now
            del running[i]
    return arrival, first, end


def pace(arrival, end):
    return (max(arrival) - min(arrival)) / (max(end) - min(end))


def ttft_growth(arrival, first):
    ttft = [f - a for a, f in zip(arrival, first)]
    q = len(ttft) // 4
    return statistics.median(ttft[-q:]) / statistics.median(ttft[:q])


if __name__ == "__main__":
    print("rate/s: pace / TTFT growth of ten seeds, * where both say saturated (capacity about 30/s)")
    for rate in (24, 28, 32, 36, 40, 48):
        cells = []
        for seed in range(1, 11):
            arrival, first, end = serve(rate, seed=seed)
            p, g = pace(arrival, end), ttft_growth(arrival, first)
            cells.append(f"{p:.2f}/{g:.1f}{'*' if p < 0.95 and g > 2 else ''}")
        print(f"{rate:3d}: " + " ".join(cells))
