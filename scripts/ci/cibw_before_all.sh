#!/usr/bin/env bash
# cibuildwheel before-all: provide the CUDA toolkit of the matrix cell being
# built at $CUDA_HOME, inside the manylinux container (runs once per container).
#
# Reads (passed into the container by [tool.cibuildwheel] environment-pass,
# exported from the cell by .github/workflows/wheels.yml):
#   FUSEDOPS_CELL_CUDA          13.0, 12.8, ... or cpu
#   FUSEDOPS_CELL_CUDA_SOURCE   pypi | nvidia-repo | none
#   CUDA_HOME                   where the toolkit must be (CUDA cells only)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
project="$(cd "${here}/../.." && pwd)"

cuda="${FUSEDOPS_CELL_CUDA:?FUSEDOPS_CELL_CUDA is not set (13.0, 12.8 or cpu; wheels.yml exports it from the cell)}"
cuda_source="${FUSEDOPS_CELL_CUDA_SOURCE:?FUSEDOPS_CELL_CUDA_SOURCE is not set (pypi, nvidia-repo or none)}"

# A Python >= 3.10 from the manylinux image for scripts/toolchain.py (the
# python that cibuildwheel puts on PATH for before-all may be older).
pick_python() {
  local candidate
  for candidate in /opt/python/cp312-cp312/bin/python /opt/python/cp311-cp311/bin/python \
    /opt/python/cp313-cp313/bin/python "$(command -v python3 || true)"; do
    if [[ -n "$candidate" && -x "$candidate" ]] &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
      echo "$candidate"
      return 0
    fi
  done
  echo "cibw_before_all.sh: no Python >= 3.10 found in the container" >&2
  return 1
}

if [[ "$cuda_source" == none ]]; then
  if [[ "$cuda" != cpu ]]; then
    echo "cibw_before_all.sh: cuda_source 'none' but the cell's cuda is '$cuda'" >&2
    exit 2
  fi
  echo "cibw_before_all.sh: CPU cell, no CUDA toolkit needed"
  exit 0
fi
target="${CUDA_HOME:?CUDA_HOME is not set; wheels.yml sets it for CUDA cells and environment-pass carries it in}"

case "$cuda_source" in
  nvidia-repo)
    home="$(bash "${here}/install_cuda_nvidia_repo.sh" "$cuda" | tail -n 1)"
    ;;
  pypi)
    python="$(pick_python)"
    "$python" -m pip --version >&2
    home="$("$python" "${project}/scripts/toolchain.py" cuda --cuda "$cuda" --print-home | tail -n 1)"
    ;;
  *)
    echo "cibw_before_all.sh: unknown FUSEDOPS_CELL_CUDA_SOURCE '$cuda_source' (pypi, nvidia-repo or none)" >&2
    exit 2
    ;;
esac

if [[ -z "$home" || ! -d "$home" ]]; then
  echo "cibw_before_all.sh: the toolkit step printed '$home', which is not a directory" >&2
  exit 1
fi
if [[ "$(realpath "$home")" != "$(realpath -m "$target")" ]]; then
  if [[ -e "$target" && ! -L "$target" ]]; then
    echo "cibw_before_all.sh: $target exists and is not a symlink; refusing to replace it" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$target")"
  ln -sfn "$home" "$target"
fi

reported="$("${target}/bin/nvcc" --version)"
echo "$reported"
if ! grep -q "release ${cuda}," <<<"$reported"; then
  echo "cibw_before_all.sh: ${target}/bin/nvcc does not report release ${cuda}" >&2
  exit 1
fi
for needed in include/cuda_runtime.h lib64/libcudart.so; do
  if [[ ! -e "${target}/${needed}" ]]; then
    echo "cibw_before_all.sh: ${target}/${needed} is missing; torch's cpp_extension needs it" >&2
    exit 1
  fi
done
echo "cibw_before_all.sh: CUDA ${cuda} (${cuda_source}) ready at ${target} -> $(realpath "$target")"
