#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and builds three host programs against it
# with find_package(strom): tests/install/consumer (one training step through the compute
# API), examples/embedded (its own actor system with strom::embedded_runtime inside), which
# trains one epoch of examples/fashion_mlp.job on one worker and must report the test
# accuracy, and examples/kvstore (its own softmax regression trained through
# strom::kv_client by 2 worker threads), which must too.
set -euo pipefail
build=$1
source=$2
# One epoch of the 784-512-256-10 MLP on one worker reached 0.805-0.827 in 7 runs (its
# updates still go through the asynchronous encoded path, so runs differ); 0.75 leaves room
# for that and still fails a model that did not learn (chance is 0.10). Two workers reached
# 0.744-0.82 in 8 runs: too close to the bar for a check that must not flake.
min_accuracy=0.75
# examples/kvstore's softmax regression, one epoch on 2 worker threads (dist_sync, Adam on the
# server): 0.8203 in every run (2 ranks merge in a fixed order; 1 and 4 ranks: 0.8195, 0.8144);
# 0.78 fails a model that learns wrongly or not at all (chance is 0.10).
min_kvstore_accuracy=0.78
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/strom"
# Only the public headers are installed: strom/strom.hpp's, not an actor's internals or the
# wire's type-ID block.
test -f "$work/prefix/include/strom/strom.hpp"
for internal in strom/actors/messages.hpp strom/actors/job/job_master_steps.hpp \
                strom/actors/cluster/scheduler.hpp strom/runtime/sim/model/model_run.hpp; do
  if test -e "$work/prefix/include/$internal"; then
    echo "check_install: the internal header $internal was installed" >&2
    exit 1
  fi
done
"$work/prefix/bin/strom" --help >/dev/null

for program in tests/install/consumer examples/embedded examples/kvstore; do
  cmake -S "$source/$program" -B "$work/$program" -G Ninja \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/$program" >/dev/null
done

# Requires the "accuracy A" line of the output file $1 (of program $2) to show at least $3.
require_accuracy() {
  awk -v min="$3" -v program="$2" '
    /^accuracy / { found = 1; ok = ($2 + 0 >= min + 0) }
    END {
      if (!found) { print "check_install: " program " printed no accuracy line" > "/dev/stderr"; exit 1 }
      if (!ok) { print "check_install: " program " accuracy below " min > "/dev/stderr"; exit 1 }
    }' "$1"
}

"$work/tests/install/consumer/strom_consumer" "$source/examples/fashion_mlp.job"
"$work/examples/embedded/strom_host" "$source/examples/fashion_mlp.job" --epochs 1 --workers 1 \
  | tee "$work/host.txt"
require_accuracy "$work/host.txt" strom_host "$min_accuracy"
"$work/examples/kvstore/strom_kvstore" --epochs 1 --workers 2 | tee "$work/kvstore.txt"
require_accuracy "$work/kvstore.txt" strom_kvstore "$min_kvstore_accuracy"
