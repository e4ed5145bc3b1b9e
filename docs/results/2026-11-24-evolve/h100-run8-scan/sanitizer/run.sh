#!/usr/bin/env bash
# compute-sanitizer on generated scan kernels (issue 20: one generated kernel per family).
cd "$(dirname "$0")/.."
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}; mkdir -p "$o"
for f in sanitize-scan/*.cu; do
  p=kb1-91-cumsum-reverse; case $f in *masked*) p=kb1-93-masked-cumsum;; *exclusive*) p=kb1-92-cumsum-exclusive;; esac
  for tool in memcheck racecheck synccheck; do
    log="$o/sanitizer-$tool-$(basename $f .cu).txt"
    timeout 100 compute-sanitizer --tool $tool --target-processes all build/kiln bench candidate --problem $p --sizes small -g 1 -w 1 -n 2 --trials 1 --source "$f" > "$log" 2>&1
    echo "$(basename $f) $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$log" | tail -1) | $(grep -E "$p .* (yes|NO) " "$log" | tail -1 | tr -s ' ' | cut -c1-120)" | tee -a "$o/summary.txt"
  done
done
