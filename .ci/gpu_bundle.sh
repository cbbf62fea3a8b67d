#!/usr/bin/env bash
# Packs what the GPU machine lacks into .gpu/ (at most 64 MiB travel with the source): the
# strom program, its CUDA module, the CUDA tests and benchmark built here, the Debian
# libraries they load (not glibc, not CUDA's: that machine's PyTorch wheels bring cuBLAS), and
# Fashion-MNIST.
# Called by `bash .ci/setup.sh gpu-bundle` after a build with the CUDA backend.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
programs=("$build/runtime/strom" "$build/bench/bench_cuda_encode" "$build"/tests/test_cuda_*)
module=$build/compute/libstrom_cuda.so
for p in "${programs[@]}" "$module"; do
  [ -x "$p" ] || { echo "gpu-bundle: $p is missing: was the CUDA backend built (nvcc found)?" >&2; exit 1; }
done
rm -rf .gpu && mkdir -p .gpu/stage/bin .gpu/stage/lib .gpu/data
cp "${programs[@]}" .gpu/stage/bin/
cp "$module" .gpu/stage/lib/
strip .gpu/stage/bin/* .gpu/stage/lib/libstrom_cuda.so
# Every library the programs and the CUDA module load, but the C library's own and CUDA's.
ldd "${programs[@]}" "$module" | awk '/=> \// {print $3}' | sort -u \
  | grep -v -E '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so|/libcu(blas|blasLt|dart)\.so' \
  | xargs -I{} cp -L {} .gpu/stage/lib/
tar -C .gpu/stage -cJf .gpu/programs.tar.xz bin lib
rm -rf .gpu/stage
cp /usr/share/datasets/fashion-mnist/*.gz .gpu/data/
du -sh .gpu
