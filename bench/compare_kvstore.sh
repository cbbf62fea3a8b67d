#!/usr/bin/env bash
# strom's parameter servers (bench_kvstore: 2 worker nodes and 1 server node, dist_sync, and
# the same 2 nodes sharing updates) vs PyTorch DistributedDataParallel with 2 gloo processes
# of one thread each, same MLP, batch and optimiser, alternated ROUNDS times in one run (these
# machines are shared: compare ratios, not absolute figures).
#   bash bench/compare_kvstore.sh [BUILD_DIR] [ROUNDS] [EPOCHS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
epochs=${3:-2}
command -v /usr/bin/python3 >/dev/null && /usr/bin/python3 -c "import torch" 2>/dev/null || {
  echo "PyTorch missing: apt-get install python3-torch" >&2; exit 1; }
results=$(mktemp)
for _ in $(seq "$rounds"); do
  OPENBLAS_NUM_THREADS=1 "$build/bench/bench_kvstore" --rounds 1 --epochs "$epochs" 2>/dev/null \
    | tee -a "$results"
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/pytorch_ddp.py | tee -a "$results"
done
/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
kv = statistics.median(r["kvstore_samples_per_second"] for r in rows if r["bench"] == "kvstore")
shared = statistics.median(r["shared_samples_per_second"] for r in rows if r["bench"] == "kvstore")
ddp = statistics.median(r["samples_per_second"] for r in rows if r.get("impl") == "pytorch_ddp")
print(json.dumps({"bench": "kvstore_vs_pytorch_ddp", "job": "fashion_mlp",
                  "strom_kvstore_samples_per_second": kv, "strom_shared_samples_per_second": shared,
                  "ddp_2_processes_samples_per_second": ddp,
                  "ratio_kvstore_to_ddp": round(kv / ddp, 3),
                  "ratio_kvstore_to_shared": round(kv / shared, 3)}))
PY
rm -f "$results"
