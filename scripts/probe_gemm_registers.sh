#!/usr/bin/env bash
# Compiles one signaling-GEMM configuration (and, with --plain, its CUTLASS-epilogue twin) for
# sm_90a with ptxas -v and prints each kernel's stack frame and spills: a CPU-only check that a
# tile fits the consumer warps' registers before any GPU time is spent on it (issue 17: a 256x192
# cooperative tile spills with kiln's epilogue, not with CUTLASS's).
# Usage: bash scripts/probe_gemm_registers.sh TILE_M TILE_N CLUSTER_M CLUSTER_N coop|coop-n|pingpong|pingpong-swap [--plain]
#   EPILOGUE_EDIT=file.py: a Python script that edits a copy of overlap/signaling_epilogue.cuh
#   (argv[1]) before compiling, to try a change without touching the tree.
#   NVCC_EXTRA="...": more nvcc flags (e.g. -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED for N > 256).
# Where cuobjdump and nvdisasm are found (PATH or .deps/cuda-sass-tools/bin, which
# `KILN_SASS_TOOLS=1 bash scripts/setup.sh` fills from NVIDIA's PyPI wheels), it also
# counts in each GEMM kernel's SASS the R2UR moves, the HGMMAs whose descriptors were just moved
# from vector registers by R2UR (0 when the k-loop keeps them in uniform registers, as CUTLASS's
# own kernels do; 14 of 16 in the ping-pong kernels before 2026-11-30i, 1.5x the instructions),
# the loops ptxas wraps around an instruction whose uniform operands it could not prove uniform
# (BRA.U.ANY) and the CALLs (docs/results/2026-11-30h-pingpong-widths/, 2026-11-30i-uniform-epilogue/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -lt 5 ]; then
  sed -n 2,9p "$0" | sed 's/^# \{0,1\}//'; exit 2
fi
tm=$1 tn=$2 cm=$3 cn=$4 kind=$5 plain=${6:-}
case $kind in coop) schedule=kCooperative ;; coop-n) schedule=kCooperativeSplitN ;; pingpong) schedule=kPingpong ;;
  pingpong-swap) schedule=kPingpongSwapAB ;;
  *) echo "kind '$kind': accepted coop, coop-n, pingpong, pingpong-swap" >&2; exit 2 ;; esac
for v in "$tm" "$tn" "$cm" "$cn"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "'$v': tile and cluster sizes are positive integers" >&2; exit 2; }
done
cutlass=$(ls -d .deps/cutlass-*/include 2>/dev/null | head -1)
[ -n "$cutlass" ] || { echo "no CUTLASS headers under .deps/: run scripts/setup.sh" >&2; exit 1; }
work=$(mktemp -d /tmp/kiln-probe.XXXXXX); [ -n "${KEEP_PROBE:-}" ] || trap 'rm -rf "$work"' EXIT; echo "# work: $work" >&2
mkdir -p "$work/layers/kiln_overlap" "$work/layers/kiln_comm" "$work/layers/kiln_core"
cp -r src/overlap "$work/layers/kiln_overlap/overlap"
ln -s "$PWD/src/comm" "$work/layers/kiln_comm/comm"; ln -s "$PWD/src/core" "$work/layers/kiln_core/core"
[ -n "${EPILOGUE_EDIT:-}" ] && python3 "$EPILOGUE_EDIT" "$work/layers/kiln_overlap/overlap/signaling_epilogue.cuh"
cat > "$work/probe.cu" <<CU
#include "overlap/signaling_gemm_impl.cuh"
namespace kiln::overlap::device {
template class SignalingGemmImpl<cutlass::bfloat16_t, WeightLayout::kNK, $tm, $tn, $cm, $cn,
                                 KernelSchedule::$schedule>;
}
CU
nvcc_flags=(-DFMT_HEADER_ONLY=1 -isystem="$cutlass" -I"$work/layers/kiln_overlap"
  -I"$work/layers/kiln_comm" -I"$work/layers/kiln_core" -Iinclude -O3 -DNDEBUG
  --generate-code=arch=compute_90a,code=[sm_90a] --expt-relaxed-constexpr -std=c++20 -Xptxas -v
  ${NVCC_EXTRA:-})
echo "kiln epilogue, tile ${tm}x${tn} cluster ${cm}x${cn} $kind:"
nvcc "${nvcc_flags[@]}" -x cu -c "$work/probe.cu" -o "$work/probe.o" 2>&1 |
  grep -E "error|stack frame" | sort | uniq -c
if [ "$plain" = --plain ]; then
  # The twin's class lives in plain_gemm_bf16_nk.cu's anonymous namespace: compile a copy of that
  # file with one more explicit instantiation.
  python3 - "$work" "$tm" "$tn" "$cm" "$cn" "$schedule" <<'PY'
import sys
work, tm, tn, cm, cn, sched = sys.argv[1:]
src = open("src/overlap/plain_gemm_bf16_nk.cu").read()
end = src.rindex("}  // namespace\n")
src = src[:end] + f"template class PlainImpl<{tm}, {tn}, {cm}, {cn}, KernelSchedule::{sched}>;\n" + src[end:]
open(f"{work}/plain.cu", "w").write(src)
PY
  echo "CUTLASS's own epilogue, same configuration:"
  nvcc "${nvcc_flags[@]}" -x cu -c "$work/plain.cu" -o "$work/plain.o" 2>&1 |
    grep -E "error|stack frame" | sort | uniq -c
fi
[ -x .deps/cuda-sass-tools/bin/cuobjdump ] && PATH="$PWD/.deps/cuda-sass-tools/bin:$PATH"
if command -v cuobjdump > /dev/null && command -v nvdisasm > /dev/null; then
  for object in "$work/probe.o" ${plain:+"$work/plain.o"}; do
    echo "SASS of $(basename "$object") (kernels with HGMMA):"
    cuobjdump -sass "$object" | python3 -c '
import re, sys
for fn in re.split(r"\n\s*Function : ", sys.stdin.read())[1:]:
    if "HGMMA" not in fn: continue
    lines = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", fn)
    hgmma = [i for i, l in enumerate(lines) if "HGMMA" in l]
    # an HGMMA with an R2UR among the three instructions before it takes its descriptors from
    # vector registers
    moved = sum(any("R2UR" in l for l in lines[max(0, i - 3):i]) for i in hgmma)
    print("  R2UR %4d  HGMMA %d (descriptors moved by R2UR: %d)  uniformity loops %d  CALL %d"
          "  instructions %d" % (sum("R2UR" in l for l in lines), len(hgmma), moved,
                                 sum("BRA.U.ANY" in l for l in lines),
                                 sum("CALL" in l for l in lines), len(lines)))'
  done
fi
