#!/usr/bin/env bash
# Install a CUDA 12.x toolkit from NVIDIA's rhel8 repository into the
# manylinux_2_28 build container (AlmaLinux 8, dnf). CUDA 12.x nvcc is not on
# PyPI, so 12.x cells get it here; 13.x cells get nvcc from PyPI through
# pipeline/toolchain/cuda.py (cuda_home) instead.
#
# Usage: install_cuda_nvidia_repo.sh VERSION        e.g. 12.8
#
# Installs nvcc plus the headers and libraries torch's extension headers pull
# in (cudart, CCCL, cuBLAS, cuSPARSE, cuSOLVER, cuRAND, NVRTC, driver stubs),
# checks that nvcc reports VERSION, and prints the toolkit root
# (/usr/local/cuda-VERSION) as the only line on stdout; dnf's output goes to
# stderr.
set -euo pipefail

version="${1:?usage: install_cuda_nvidia_repo.sh VERSION (a CUDA 12.x version such as 12.8)}"

case "$version" in
  12.[0-9] | 12.[0-9][0-9]) ;;
  *)
    echo "install_cuda_nvidia_repo.sh: expected a CUDA 12.x version such as 12.8, got '$version'" >&2
    echo "(CUDA 13.x nvcc comes from PyPI: pipeline.toolchain.cuda.cuda_home, run by python -m pipeline cibw before-all)" >&2
    exit 2
    ;;
esac

case "$(uname -m)" in
  x86_64) repo_arch=x86_64 ;;
  aarch64) repo_arch=sbsa ;;
  *)
    echo "install_cuda_nvidia_repo.sh: no NVIDIA rhel8 repository for $(uname -m)" >&2
    exit 2
    ;;
esac

if ! command -v dnf >/dev/null 2>&1; then
  echo "install_cuda_nvidia_repo.sh: dnf not found; this script is for the manylinux_2_28 (AlmaLinux 8) container" >&2
  exit 2
fi
# shellcheck source=/dev/null
. /etc/os-release
case "${VERSION_ID:-}" in
  8 | 8.*) ;;
  *)
    echo "install_cuda_nvidia_repo.sh: NVIDIA's rhel8 repository needs an EL8 system, this is ${PRETTY_NAME:-unknown}" >&2
    exit 2
    ;;
esac

suffix="${version/./-}" # 12.8 -> 12-8, NVIDIA's package suffix
packages=(
  "cuda-nvcc-${suffix}"
  "cuda-cudart-devel-${suffix}"
  "cuda-cccl-${suffix}"
  "cuda-cuobjdump-${suffix}"
  "cuda-nvrtc-devel-${suffix}"
  "cuda-driver-devel-${suffix}"
  "cuda-profiler-api-${suffix}"
  "libcublas-devel-${suffix}"
  "libcusparse-devel-${suffix}"
  "libcusolver-devel-${suffix}"
  "libcurand-devel-${suffix}"
)

{
  dnf install -y dnf-plugins-core
  dnf config-manager --add-repo "https://developer.download.nvidia.com/compute/cuda/repos/rhel8/${repo_arch}/cuda-rhel8.repo"
  dnf install -y --setopt=install_weak_deps=False "${packages[@]}"
  dnf clean all
} >&2

home="/usr/local/cuda-${version}"
nvcc="${home}/bin/nvcc"
if [[ ! -x "$nvcc" ]]; then
  echo "install_cuda_nvidia_repo.sh: $nvcc is missing after the install" >&2
  exit 1
fi
reported="$("$nvcc" --version)"
echo "$reported" >&2
if ! grep -q "release ${version}," <<<"$reported"; then
  echo "install_cuda_nvidia_repo.sh: $nvcc does not report release ${version}" >&2
  exit 1
fi
echo "$home"
