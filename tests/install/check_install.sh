#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, builds tests/install/consumer against it
# with find_package(strom), and runs it on an example job.
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
test -x "$work/prefix/bin/strom"
"$work/prefix/bin/strom" --help >/dev/null
"$work/consumer/strom_consumer" "$source/examples/fashion_mlp.job"
