#!/usr/bin/env bash
# Installs what strom needs from Debian (only the packages that are missing), builds it,
# then runs the main job (`train`) or the whole test suite (`test`).
#   bash .ci/setup.sh train       # Fashion-MNIST training from the command line
#   bash .ci/setup.sh test        # every test suite except the soak label
# The GPU check (docs/gpu.md) is two steps: `gpu-bundle` here builds with the CUDA backend
# and packs what the GPU machine lacks into .gpu/; `gpu-check` there runs the check from it.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-train}
case "$mode" in
  train|test|gpu-bundle) ;;
  gpu-check) exec bash .ci/gpu_check.sh ;;
  *) echo "usage: bash .ci/setup.sh train|test|gpu-bundle|gpu-check" >&2; exit 2 ;;
esac

packages=(
  g++ cmake ninja-build pkg-config
  libcaf-dev capnproto libcapnp-dev libssl-dev liblz4-dev libfmt-dev zlib1g-dev
  libopenblas-dev libboost-test-dev prometheus-cpp-dev libcivetweb-dev nlohmann-json3-dev
  libprotobuf-dev libonnx-dev
  chromium
  dataset-fashion-mnist
  openssh-server openssh-client
)
# The ONNX export's tests check its files with real consumers: ONNX's checker and OpenCV's
# DNN module (tests/cli/onnx_consumers.py, run by Debian's /usr/bin/python3).
if [ "$mode" = test ]; then packages+=(python3-onnx python3-opencv); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=${STROM_BUILD_DIR:-build}
# The CUDA backend is built wherever nvcc is found; the GPU check insists on it.
cuda=()
[ "$mode" = gpu-bundle ] && cuda=(-DSTROM_CUDA=ON)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda[@]}"
# The main job needs the program alone; the tests and the GPU check need everything.
targets=()
[ "$mode" = train ] && targets=(--target strom)
cmake --build "$build" -j "$(nproc)" "${targets[@]}"

if [ "$mode" = gpu-bundle ]; then
  exec bash .ci/gpu_bundle.sh "$build"
elif [ "$mode" = train ]; then
  # An in-process cluster: two nodes, each its own actor system, over loopback.
  # It ends with a summary: accuracy, time, samples/s, bytes sent, where its files are.
  exec "$build/runtime/strom" train examples/fashion_mlp.job --nodes 2 \
    --metrics-out "$build/fashion_mlp.metrics.json" --checkpoint-dir "$build/checkpoints"
else
  # The soak label marks long runs that CI skips (ctest -L soak runs them).
  ctest --test-dir "$build" --output-on-failure --label-exclude soak -j "$(nproc)"
fi
