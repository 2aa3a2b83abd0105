# The model of the server's-cost GPU scripts (server_cost_gpu.sh,
# endpoint_rates_gpu.sh), sourced after tests/cli/lib.sh. Sets
#   gguf  IB_COST_GGUF, else the zoo's F16 export of llama-3.2-1b (made once
#         into INFERBENCH_ZOO_CACHE, default /tmp/inferbench-zoo, and
#         copied to $TMP); the script ends (exit 1) when the export fails
#   lib   the in-process engine's --option library=IB_LLAMA_LIBRARY, or none
export INFERBENCH_ZOO_CACHE=${INFERBENCH_ZOO_CACHE:-/tmp/inferbench-zoo}
mkdir -p "$INFERBENCH_ZOO_CACHE"
gguf=${IB_COST_GGUF:-}
if [ -z "$gguf" ]; then
  gguf=$TMP/model.gguf
  if ! expect_exit 0 "zoo export llama-3.2-1b" -- "$IB" zoo export llama-3.2-1b -o "$gguf"; then
    finish
    exit 1
  fi
fi
lib=(); [ -n "${IB_LLAMA_LIBRARY:-}" ] && lib=(--option "library=$IB_LLAMA_LIBRARY")
