#!/usr/bin/env bash
# The scan family against PyTorch eager in one device call (issue 20): PyTorch eager's times for
# kb1-89..93 at KernelBench's size, kiln's suite (reference, kiln, CUB) with them, and a short
# evolve run on the three scans that run 8 left out (kb1-90, 91, 93).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o"
timeout 150 python3 scripts/kb1_torch_eager.py --problems 'kb1-89-*' 'kb1-9[0-3]-*' --size kb \
  --json "$o/torch-eager-scan-kb.json" > "$o/torch-eager.txt" 2>&1; echo "eager exit $?" | tee "$o/summary.txt"
tail -7 "$o/torch-eager.txt" | tee -a "$o/summary.txt"
timeout 150 build/kiln bench suite --problems kb1-89-cumsum kb1-90-cumprod kb1-91-cumsum-reverse \
  kb1-92-cumsum-exclusive kb1-93-masked-cumsum --sizes kb --torch-json "$o/torch-eager-scan-kb.json" \
  --json "$o/suite-scan-kb.json" > "$o/suite-scan-kb.txt" 2>&1; echo "suite exit $?" | tee -a "$o/summary.txt"
grep -E "^kb1-" "$o/suite-scan-kb.txt" | tee -a "$o/summary.txt"
for p in kb1-90-cumprod kb1-91-cumsum-reverse kb1-93-masked-cumsum; do
  timeout 100 build/kiln evolve run --problem $p --size kb --budget 16 --seed 1 -w 3 -n 10 --trials 2 \
    --out "/tmp/evolve-$p" > "$o/evolve-$p.txt" 2>&1; echo "evolve $p exit $?" | tee -a "$o/summary.txt"
  tail -2 "$o/evolve-$p.txt" | tee -a "$o/summary.txt"
done
