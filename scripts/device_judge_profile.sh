#!/usr/bin/env bash
# Where the judge's GPU time goes for one candidate (issue 20's engine speed: at KernelBench's
# sizes a search is bound by the judge's turns on the GPU, ~0.2-0.3 s per evaluation). For each
# PROFILE_CASES entry ("problem:size:source"), one `kiln bench candidate` run builds it, then one
# run per timing (screen: as a search ranks, 1 trial; guarded: as a confirmation, 2 trials) runs
# under Nsight Systems (CUDA trace). profile-<problem>-<size>-<timing>.txt: the GPU kernels and
# memory operations by total time, and the CUDA API calls by total time.
# Usage: bash scripts/device_judge_profile.sh   (PROFILE_CASES, PROFILE_ARGS to change the judge's
# -w/-n, default "-w 3 -n 10")
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}/judge-profile; mkdir -p "$o"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys \
  /usr/local/cuda/nsight-systems*/bin/nsys 2> /dev/null | head -1)
if [ -z "$nsys" ]; then
  echo "device_judge_profile: no nsys on this machine (PATH, /usr/local/cuda, /opt/nvidia)" | tee "$o/summary.txt"
  exit 1
fi
echo "device_judge_profile: $("$nsys" --version 2>&1 | head -1) on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" | tee "$o/summary.txt"
cases=${PROFILE_CASES:-"kb1-19-relu:kb:docs/results/2026-11-25-evolve-set/screen/kb1-19-relu/best.cu"}
# shellcheck disable=SC2206
args=(${PROFILE_ARGS:--w 3 -n 10})
for case in $cases; do
  IFS=: read -r p size src <<< "$case"
  common=(bench candidate --problem "$p" --sizes "$size" -g 1 --source "$src" --build-dir /tmp/kiln-profile
    --reuse-builds "${args[@]}" --timeout 60 --skip-reference-timing)
  build/kiln "${common[@]}" --trials 1 --timing screen > "$o/$p-$size-build.txt" 2>&1
  for timing in screen guarded; do
    trials=1; [ "$timing" = guarded ] && trials=2
    name="$p-$size-$timing"
    start=$SECONDS
    "$nsys" profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true \
      -o "/tmp/kiln-profile/$name" build/kiln "${common[@]}" --trials "$trials" --timing "$timing" \
      > "$o/$name-run.txt" 2>&1
    echo "$name: exit $? in $((SECONDS - start)) s" | tee -a "$o/summary.txt"
    "$nsys" stats --report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum --format table \
      "/tmp/kiln-profile/$name.nsys-rep" > "$o/profile-$name.txt" 2>&1
    grep -A12 -E "cuda_gpu_kern_sum|cuda_gpu_mem_time_sum" "$o/profile-$name.txt" | cut -c1-200 | tee -a "$o/summary.txt" > /dev/null
  done
done
