#!/usr/bin/env bash
# The GPU check (docs/gpu.md), on a machine with an NVIDIA GPU, from the bundle that
# `bash .ci/setup.sh gpu-bundle` packed into .gpu/ (that machine has no Debian packages of
# ours): the CUDA conformance tests, the encoding benchmark, both example jobs for 2 epochs on
# the GPU and on the CPU, 4 workers sharing one GPU, and PyTorch on the same GPU for the same
# networks. Prints one JSON object per result, then the summary (.ci/gpu_summary.py) last.
# Logs go to $OUT/gpu_logs.tar.gz where OUT is set.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f .gpu/programs.tar.xz ] || {
  echo "gpu-check: .gpu/programs.tar.xz is missing: run bash .ci/setup.sh gpu-bundle first" >&2
  exit 1
}
work=$(mktemp -d)
logs=$work/logs
mkdir -p "$logs"
tar -C "$work" -xJf .gpu/programs.tar.xz
# The example jobs read Fashion-MNIST where Debian installs it.
mkdir -p /usr/share/datasets/fashion-mnist
cp -n .gpu/data/*.gz /usr/share/datasets/fashion-mnist/
# cuBLAS: the system's, or that of the PyTorch wheels (nvidia/*/lib).
cublas=$(ldconfig -p | awk '/libcublas\.so\.13 / {print $NF; exit}')
[ -n "$cublas" ] || cublas=$(find / -xdev -name 'libcublas.so.13' -not -path '/proc/*' 2>/dev/null | head -1)
[ -n "$cublas" ] || { echo "gpu-check: no libcublas.so.13 on this machine" >&2; exit 1; }
libs="$work/lib:$(dirname "$cublas")"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# run NAME SECONDS COMMAND...: our programs with the bundled libraries; the log in $logs.
run() {
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" env LD_LIBRARY_PATH="$libs" "$@" >"$logs/$name.log" 2>&1
  local status=$?
  echo "{\"step\": \"$name\", \"exit\": $status, \"seconds\": $((SECONDS - start))}" | tee -a "$logs/steps.jsonl"
  [ $status -eq 0 ] || tail -n 30 "$logs/$name.log"
  return 0
}

for t in "$work"/bin/test_cuda_*; do
  run "$(basename "$t")" 300 "$t" --log_level=test_suite --report_level=short
done
run bench_cuda_encode 120 "$work/bin/bench_cuda_encode"
cp "$logs/bench_cuda_encode.log" "$logs/encode.jsonl"
strom=$work/bin/strom
# train JOB DEVICE: the example job for 2 epochs with one worker.
train() {
  run "$1_$2" 400 "$strom" train "examples/fashion_$1.job" --device "$2" --workers 1 --epochs 2 \
    --metrics-out "$logs/$1_$2.json" --checkpoint-dir "$work/checkpoints/$1_$2"
}
# The CPU runs take a core each beside the GPU runs (which time the GPU, not the host).
(train mlp cpu; train cnn cpu) &
cpu_runs=$!
train mlp cuda
train cnn cuda
run mlp_cuda_4workers 400 "$strom" train examples/fashion_mlp.job --device cuda --workers 4 \
  --epochs 2 --metrics-out "$logs/mlp_cuda_4workers.json" --checkpoint-dir "$work/checkpoints/4"
# PyTorch runs with its own libraries, not the bundle's.
start=$SECONDS
timeout 240 python3 bench/pytorch_gpu.py --epochs 2 >"$logs/pytorch.jsonl" 2>"$logs/pytorch.log"
echo "{\"step\": \"pytorch\", \"exit\": $?, \"seconds\": $((SECONDS - start))}" | tee -a "$logs/steps.jsonl"

wait $cpu_runs
python3 .ci/gpu_summary.py "$logs" | tee "$logs/summary.json"
if [ -n "${OUT:-}" ]; then
  tar -C "$work" -czf "$OUT/gpu_logs.tar.gz" logs
  cp "$logs/summary.json" "$OUT/"
fi
