#!/usr/bin/env bash
# strom with 2 workers (bench_parallel) vs PyTorch DistributedDataParallel with 2 gloo
# processes of one thread each, same MLP, batch and optimiser, measured back to back in one
# run (these machines are shared: compare ratios, not absolute figures). Alternates the two
# ROUNDS times and prints every measurement plus the median ratio strom / DDP.
#   bash bench/compare_parallel.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
command -v /usr/bin/python3 >/dev/null && /usr/bin/python3 -c "import torch" 2>/dev/null || {
  echo "PyTorch missing: apt-get install python3-torch" >&2; exit 1; }
results=$(mktemp)
for _ in $(seq "$rounds"); do
  OPENBLAS_NUM_THREADS=1 "$build/bench/bench_parallel" --rounds 1 2>/dev/null | tee -a "$results"
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/pytorch_ddp.py | tee -a "$results"
done
/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
strom = statistics.median(r["samples_per_second_2_workers"] for r in rows
                          if r["bench"] == "parallel" and r["impl"] == "strom")
single = statistics.median(r["samples_per_second_1_worker"] for r in rows
                           if r["bench"] == "parallel" and r["impl"] == "strom")
ddp = statistics.median(r["samples_per_second"] for r in rows if r.get("impl") == "pytorch_ddp")
print(json.dumps({"bench": "parallel_vs_pytorch_ddp", "job": "fashion_mlp",
                  "strom_1_worker_samples_per_second": single,
                  "strom_2_workers_samples_per_second": strom,
                  "ddp_2_processes_samples_per_second": ddp, "ratio": round(strom / ddp, 3)}))
PY
rm -f "$results"
