#!/usr/bin/env bash
# strom vs PyTorch on the CPU, same models, batch and one thread, measured back to back in
# one run (these machines are shared: compare ratios, not absolute figures). Alternates the
# two implementations ROUNDS times and prints every measurement plus the median ratio.
#   bash bench/compare_training.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
command -v /usr/bin/python3 >/dev/null && /usr/bin/python3 -c "import torch" 2>/dev/null || {
  echo "PyTorch missing: apt-get install python3-torch" >&2; exit 1; }
results=$(mktemp)
for _ in $(seq "$rounds"); do
  OPENBLAS_NUM_THREADS=1 "$build/bench/bench_training" | tee -a "$results"
  OMP_NUM_THREADS=1 /usr/bin/python3 bench/pytorch_training.py | tee -a "$results"
done
/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
for job in sorted({r["job"] for r in rows}):
    s = statistics.median(r["samples_per_second"] for r in rows if r["job"] == job and r["impl"] == "strom")
    p = statistics.median(r["samples_per_second"] for r in rows if r["job"] == job and r["impl"] == "pytorch")
    print(json.dumps({"bench": "training_vs_pytorch", "job": job, "strom_samples_per_second": s,
                      "pytorch_samples_per_second": p, "ratio": round(s / p, 3)}))
PY
rm -f "$results"
