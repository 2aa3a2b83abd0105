#!/usr/bin/env python3
"""A SYNTHETIC trace of the Azure LLM inference trace's shape, for serve --arrivals.

The public Azure LLM inference trace (Azure/AzurePublicDataset,
AzureLLMInferenceTrace_conv.csv, 2023) is not in this repository. This
writes a file in its CSV format (header TIMESTAMP,ContextTokens,GeneratedTokens,
times of the day such as 2023-11-16 18:15:46.6805900), which
`inferbench serve MODEL --arrivals FILE` reads as it reads the real one
(docs/serve-generative.md, "The requests"), with requests of the
conversation trace's shape. Nothing in it is measured or fitted: it is
drawn from the seed with these parameters (each an option):

- arrivals: gaps gamma-distributed with mean 1/--rate s and shape
  --burstiness (vLLM's definition: 1 is Poisson, below 1 burstier; default
  0.5, bursts of requests and lulls between them), the first at --start;
- ContextTokens: log-normal, median --context-median (default 1020, about
  the conversation trace's median prompt) and log-sd --context-sigma
  (default 1.0: a long tail of prompts of several thousand tokens);
- GeneratedTokens: log-normal, median --generated-median (default 200) and
  log-sd --generated-sigma (default 0.7: a few hundred, some over 500);
- clipping: GeneratedTokens to [1, --max-generated] (default 1024), then
  ContextTokens to [1, --max-context - GeneratedTokens] (default 4096: the
  context a slot is given must hold both; the model's context bounds it).

The same seed and options write the same bytes (Python's `random` is
seeded, its draws made in one fixed order: the gap, the context, the
output of each request in turn).

    python3 scripts/synthetic_azure_trace.py --requests 400 --rate 8 --seed 1 > trace.csv
    inferbench serve zoo:llama-3.2-1b --arrivals trace.csv --slots 32 --slo-ttft-ms 500 --slo-tpot-ms 30
"""
import argparse
import datetime
import math
import random
import sys


def positive(kind):
    def parse(text):
        v = kind(text)
        if not v > 0:
            raise argparse.ArgumentTypeError(f"{text}: must be above 0")
        return v

    return parse


def options(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--requests", type=positive(int), default=400)
    p.add_argument("--rate", type=positive(float), default=8.0, help="mean requests a second")
    p.add_argument("--burstiness", type=positive(float), default=0.5, help="the gaps' gamma shape")
    p.add_argument("--context-median", type=positive(float), default=1020.0)
    p.add_argument("--context-sigma", type=float, default=1.0)
    p.add_argument("--generated-median", type=positive(float), default=200.0)
    p.add_argument("--generated-sigma", type=float, default=0.7)
    p.add_argument("--max-context", type=positive(int), default=4096, help="context + generated at most")
    p.add_argument("--max-generated", type=positive(int), default=1024)
    p.add_argument("--start", default="2023-11-16 18:15:46", help="the first arrival's time")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    if a.max_context < 2:
        p.error("--max-context: at least 2 (a prompt token and an output token)")
    if a.context_sigma < 0 or a.generated_sigma < 0:
        p.error("a log-sd is 0 or above")
    try:
        a.start = datetime.datetime.fromisoformat(a.start)
    except ValueError:
        p.error(f"--start {a.start}: expected a time such as 2023-11-16 18:15:46")
    return a


def clip(v, low, high):
    return max(low, min(high, v))


def requests(a):
    """(arrival in s from the first, context tokens, generated tokens), in order."""
    rng = random.Random(a.seed)
    t = 0.0
    for i in range(a.requests):
        # The first request arrives at the start; each gap drawn even so, so
        # that every request's draws come in the same order.
        gap = rng.gammavariate(a.burstiness, 1.0 / (a.rate * a.burstiness))
        t = t + gap if i else 0.0
        context = rng.lognormvariate(math.log(a.context_median), a.context_sigma)
        generated = rng.lognormvariate(math.log(a.generated_median), a.generated_sigma)
        out = clip(round(generated), 1, min(a.max_generated, a.max_context - 1))
        yield t, clip(round(context), 1, a.max_context - out), out


def timestamp(start, s):
    """2023-11-16 18:15:46.6805900: the trace's seven digits of a second."""
    at = start + datetime.timedelta(microseconds=round(s * 1e6))
    return at.strftime("%Y-%m-%d %H:%M:%S.") + f"{at.microsecond:06d}0"


def main(argv):
    a = options(argv)
    out = sys.stdout
    out.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    for s, context, generated in requests(a):
        out.write(f"{timestamp(a.start, s)},{context},{generated}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
