#!/usr/bin/env bash
# nvcc through ccache, for torch's cpp_extension: set
#   PYTORCH_NVCC=<repo>/scripts/ci/ccache-nvcc.sh
# and torch writes this script into its ninja file in place of
# $CUDA_HOME/bin/nvcc. Without ccache on PATH it runs nvcc directly.
set -euo pipefail

nvcc="${CUDA_HOME:?CUDA_HOME is not set; ccache-nvcc.sh runs \$CUDA_HOME/bin/nvcc}/bin/nvcc"
if [[ ! -x "$nvcc" ]]; then
  echo "ccache-nvcc.sh: $nvcc is not an executable" >&2
  exit 1
fi
if command -v ccache >/dev/null 2>&1; then
  exec ccache "$nvcc" "$@"
fi
exec "$nvcc" "$@"
