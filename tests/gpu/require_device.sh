# Sourced by the GPU tests after tests/cli/lib.sh: skips (77) where no CUDA
# GPU is usable, so that the suite passes cleanly on machines without one.
if ! "$IB" info >/dev/null 2>&1; then
  echo "no usable CUDA GPU: skipped"
  exit 77
fi
