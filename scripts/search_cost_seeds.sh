#!/usr/bin/env bash
# What serve's SLO search costs against the sweep of the same grid, over
# Poisson seeds, on the fake engine's virtual clock (no GPU, seconds a
# seed): the benchmark behind docs/serve-generative.md, "Why bisection",
# and docs/measurements.md's figures of it. The engine is scripted in the
# shape of the H100's F16 zoo:llama-3.2-1b at 512 + 128 tokens on 32
# slots (a step of 2 ms + 40 us a decode token + 14 us a prompt token:
# about 50 requests/s at the targets), then three other shapes; each
# search as tests/gpu/serve_llama_gpu.sh's part `search` runs it (460
# requests a rate, TTFT p99 <= 500 ms and TPOT p99 <= 30 ms at 99%, 16
# warm-up requests, from the rate the warm-up served).
#
#   bash scripts/search_cost_seeds.sh [build/inferbench] [SEEDS]   # SEEDS default 20
#
# Prints, a shape a line: the requests served against the sweep's, mean
# and largest, how many seeds spent over a third, and each seed's answer.
set -euo pipefail
ib=${1:-build/inferbench}
seeds=${2:-20}
[ -x "$ib" ] || { echo "search_cost_seeds.sh: no program at $ib (build first: make build)" >&2; exit 2; }
for shape in "2000 40 14000" "1500 50 20000" "3000 20 8000" "1000 80 30000"; do
  read -r batch_us decode_us prefill_ns <<<"$shape"
  for seed in $(seq 1 "$seeds"); do
    "$ib" serve m.gguf --backend fake --option cold_calls=0 --option batch_us="$batch_us" \
      --option batch_decode_us="$decode_us" --option batch_prefill_ns="$prefill_ns" --slots 32 \
      --prompt-tokens 512 --new-tokens 128 --prefill-chunk 512 --requests 460 --warmup-requests 16 \
      --slo-ttft-ms 500 --slo-tpot-ms 30 --slo-percentile 99 --schedule-seed "$seed" --quiet
  done | python3 -c '
import re, sys
runs = re.findall(r"search cost: (\d+) requests served over \d+ rates, against (\d+).*?answer: ([0-9.]+)", sys.stdin.read(), re.S)
share = [int(a) / int(b) for a, b, _ in runs]
answers = " ".join(c for *_, c in runs)
print(f"step {sys.argv[1]} us + {sys.argv[2]} us a decode token + {sys.argv[3]} ns a prompt token: {len(runs)} seeds, "
      f"requests against the sweep {100 * sum(share) / len(share):.1f}% on average, {100 * max(share):.1f}% at most, "
      f"{sum(s > 1 / 3 for s in share)} over a third; answers {answers} requests/s")
' "$batch_us" "$decode_us" "$prefill_ns"
done
