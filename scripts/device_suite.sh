#!/usr/bin/env bash
# Device run for the benchmark harness (issue 5) and the re-checks of this session's changes:
# GPU tests (suite, reduction, overlap), `kiln bench suite` on every GPU with default timing and
# with --preset pkb. Binaries come prebuilt in build/. Writes /tmp/kiln-suite/suite/ and packs it
# as $OUT/suite.tar.gz after every step. Usage: bash scripts/device_suite.sh [tests] [suite] [pkb]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/device_env.sh
steps=${*:-tests suite pkb}
out=/tmp/kiln-suite/suite; rm -rf "$out"; mkdir -p "$out"
pack() { tar -czf "${OUT:-out}/suite.tar.gz" -C "$(dirname "$out")" suite; }
step() { pack; [[ " $steps " == *" $1 "* ]]; }
run() { echo "+ $*"; "$@"; echo "exit $?"; }
gpus=$(nvidia-smi -L | wc -l)
{ nvidia-smi; nvidia-smi topo -m; } > "$out/device.txt" 2>&1
step tests && run timeout 300 build/kiln_gpu_tests --gtest_filter="${TESTS:-SuiteGpu.*:ReduceGpu.*:OverlapGpu.*}" > "$out/gpu_tests.txt" 2>&1
step tests && grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) " "$out/gpu_tests.txt"
step suite && run timeout 200 build/kiln bench suite -g "$gpus" --json "$out/suite-g$gpus.json" 2>&1 | tee "$out/suite-g$gpus.txt"
step pkb && run timeout 200 build/kiln bench suite -g "$gpus" --preset pkb --json "$out/suite-g$gpus-pkb.json" 2>&1 | tee "$out/suite-g$gpus-pkb.txt"
pack
