#!/usr/bin/env bash
# One device call for the scan family (issue 20): GPU tests, the hand-written solutions (kiln, CUB)
# at kb size, and a short evolve run per problem at kb size.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o"
timeout 240 build/kiln_gpu_tests --gtest_filter='EvolveGpu.*' > "$o/tests-evolve.txt" 2>&1; echo "tests exit $?" | tee "$o/summary.txt"
grep -E "^\[ +(OK|FAILED) |U [0-9]" "$o/tests-evolve.txt" | tee -a "$o/summary.txt"
timeout 120 build/kiln bench suite --problems 'kb1-89-cumsum' 'kb1-92-cumsum-exclusive' 'kb1-93-masked-cumsum' --sizes kb --json "$o/suite-scan-kb.json" > "$o/suite-scan-kb.txt" 2>&1; echo "suite exit $?" | tee -a "$o/summary.txt"
grep -E "kb1-" "$o/suite-scan-kb.txt" | tail -8 | tee -a "$o/summary.txt"
for p in kb1-89-cumsum kb1-92-cumsum-exclusive; do
  timeout 150 build/kiln evolve run --problem $p --size kb --budget 24 --seed 1 -w 3 -n 10 --trials 2 --out "$o/evolve-$p" > "$o/evolve-$p.txt" 2>&1; echo "evolve $p exit $?" | tee -a "$o/summary.txt"
  tail -4 "$o/evolve-$p.txt" | tee -a "$o/summary.txt"
done
