#!/usr/bin/env bash
# compute-sanitizer on two generated norm kernels at size small (the Welford one-pass variance in a
# cluster; call 6's log-softmax winner: a 16-block cluster with partial shared-memory residency).
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.."
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
d=docs/results/2026-11-25-norm-family/call8; o=${OUT:-out}
for pick in "kb1-40-layernorm:layernorm-cluster-welford" "kb1-24-log-softmax:log-softmax-cluster16-kept"; do
  p=${pick%%:*}; f=${pick##*:}
  for tool in memcheck racecheck; do
    timeout 75 compute-sanitizer --tool $tool --target-processes all --report-api-errors no \
      build/kiln bench candidate --problem $p --sizes small -g 1 --source $d/$f.cu -w 1 -n 2 --trials 1 \
      --timeout 60 > $o/$f-$tool.txt 2>&1
    echo "$f $tool exit $?: $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $o/$f-$tool.txt | tr '\n' ' ') $(grep -h '# candidate' $o/$f-$tool.txt)"
  done
done
