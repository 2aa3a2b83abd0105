# Absurd values are refused up front: exit 2, one line naming the option,
# before any model is loaded or measured: every command asks for a warm-up
# of an hour, so exit 2 within timeout's 120 s is a refusal before measuring
# at any load (until issue 28 a 5 s bound on a measurement of about 15 s
# said it); how long each took is a figure.
. "$(dirname "$0")/lib.sh"

# refused DESCRIPTION PATTERN -- COMMAND...
refused() {
  local what=$1 pattern=$2
  shift 2
  local t0=$(date +%s%N)
  shift
  expect_exit 2 "$what" -- timeout 120 "$@" || return
  local ms=$((($(date +%s%N) - t0) / 1000000))
  expect_grep "^inferbench[ :].*($pattern)" "$TMP/err" "$what: names the problem"
  record "$what: refused in $ms ms"
}

HOUR=(--warmup-ms 3600000 --warmup-max-ms 3600000)
L=("$IB" latency zoo:efficientnet-b0 --device cpu "${HOUR[@]}")
T=("$IB" throughput zoo:efficientnet-b0 --device cpu "${HOUR[@]}")

refused "--runs 0" "--runs '0'.*between 1 and 1000000" -- "${L[@]}" --runs 0
refused "--runs 2000000000" "--runs '2000000000'.*between" -- "${L[@]}" --runs 2000000000
refused "--runs -5" "--runs '-5'.*between" -- "${L[@]}" --runs -5
refused "--runs 1e3" "--runs '1e3'.*whole number" -- "${L[@]}" --runs 1e3
refused "--runs ''" "--runs ''" -- "${L[@]}" --runs ''
refused "--runs 99999999999999999999" "between" -- "${L[@]}" --runs 99999999999999999999
refused "--batch 0" "--batch '0'.*between" -- "${L[@]}" --batch 0
refused "--batch 99999999999" "--batch '99999999999'.*between" -- "${L[@]}" --batch 99999999999
refused "--warmup-ms -1" "--warmup-ms '-1'.*between" -- "${L[@]}" --warmup-ms -1
refused "--warmup-ms nan" "--warmup-ms 'nan'.*not a number" -- "${L[@]}" --warmup-ms nan
refused "--warmup-runs 2000000" "--warmup-runs.*between" -- "${L[@]}" --warmup-runs 2000000
refused "--precision 0" "--precision '0'.*above 0% and at most 50%" -- "${L[@]}" --precision 0
refused "--precision 80%" "--precision '80%'.*above 0% and at most 50%" -- "${L[@]}" --precision 80%
refused "--precision abc" "--precision 'abc'" -- "${L[@]}" --precision abc
refused "--precision -1%" "--precision '-1%?'" -- "${L[@]}" --precision -1%
refused "--min-runs above --max-runs" "--min-runs must not exceed --max-runs" -- \
  "${L[@]}" --precision 1% --min-runs 500 --max-runs 100
refused "--warmup-max-ms below --warmup-ms" "--warmup-max-ms must not be below" -- \
  "${L[@]}" --warmup-ms 100 --warmup-max-ms 50
refused "--max-batch 0" "--max-batch '0'.*between" -- "${T[@]}" --max-batch 0
refused "--threads 0" "--threads '0'.*between" -- "${L[@]}" --threads 0
refused "--max-time-ms 0" "--max-time-ms '0'.*between" -- "${L[@]}" --max-time-ms 0
refused "--device-id -1" "--device-id '-1'.*between" -- "${L[@]}" --device-id -1
refused "--shape x:0" "dimension 1 is 0" -- "${L[@]}" --shape x:0
refused "--shape without ':'" "expected NAME:D1xD2" -- "${L[@]}" --shape x
refused "--shape of rank 9" "more than 8 dimensions" -- "${L[@]}" --shape x:1x1x1x1x1x1x1x1x1
refused "--shape given twice" "input given twice" -- "${L[@]}" --shape x:1 --shape x:2
refused "--device tpu" "--device 'tpu'.*cuda, cpu or auto" -- "${L[@]}" --device tpu
refused "--cudnn-search fastest" "expected exhaustive" -- "${L[@]}" --cudnn-search fastest
refused "an unknown option" "unknown option '--frobnicate'" -- "${L[@]}" --frobnicate
refused "an unknown short option" "unknown option" -- "${L[@]}" -q
refused "a missing option value" "missing value for option '--runs'" -- "${L[@]}" --runs
refused "zoo list --runs 5" "--runs does not apply" -- "$IB" zoo list --runs 5
refused "latency --max-batch 8" "--max-batch does not apply" -- "${L[@]}" --max-batch 8
refused "latency --fp16" "--fp16 does not apply" -- "${L[@]}" --fp16
refused "an unknown command" "unknown command 'frobnicate'" -- "$IB" frobnicate
refused "zoo without a subcommand" "zoo needs a subcommand" -- "$IB" zoo
refused "two models" "one model" -- "${L[@]}" zoo:mlp
finish
