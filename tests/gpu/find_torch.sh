# Sourced by the GPU tests that need PyTorch: find_torch_python prints a
# python3 that imports torch with CUDA ($IB_TORCH_PYTHON first, then the
# usual places), or fails.
find_torch_python() {
  local candidates=("${IB_TORCH_PYTHON:-}" python3 python /usr/bin/python3 /usr/local/bin/python3 \
    /opt/conda/bin/python /opt/venv/bin/python "$HOME/.venv/bin/python" "$HOME/venv/bin/python" \
    /opt/*/bin/python3 /opt/*/*/bin/python3 "$HOME"/*/bin/python3 /workspace/*/bin/python3)
  for p in "${candidates[@]}"; do
    [ -n "$p" ] || continue
    command -v "$p" >/dev/null 2>&1 || continue
    if "$p" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
      command -v "$p"
      return 0
    fi
  done
  return 1
}
