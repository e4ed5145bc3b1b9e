# Sourced by the step-based device scripts (device_shared_gpu.sh, device_x4_acceptance.sh, ...) after
# they set `out` (a work folder), `archive` (the name packed into $OUT) and `steps` (the steps asked
# for). Everything a step writes goes under $out; pack copies it, and the summary, into $OUT.
final="${OUT:-out}"; mkdir -p "$final"
pack() { tar -czf "$final/$archive.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"; cp "$out/summary.txt" "$final/" 2>/dev/null; }
note() { echo "$*" | tee -a "$out/summary.txt"; }
# Packs what is there, then says whether step $1 was asked for (and notes its start).
step() { pack; [[ " $steps " == *" $1 "* ]] && note "== $1 $(date -u +%T)"; }
# Runs a command with a time limit, its output to $out/<log>; notes the exit code and the seconds.
timed() {
  local limit=$1 log=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$out/$log" 2>&1
  local code=$?
  note "$log: exit $code in $((SECONDS - start)) s"
  return $code
}
# --- For scripts with one deadline for the call (DEADLINE s from the start, default 560) ---
deadline=${DEADLINE:-560}
# Runs a command under min(LIMIT, time left before the deadline); skips it when under 15 s are
# left, and says so in the summary.
capped() {
  local limit=$1 log=$2; shift 2
  local left=$((deadline - SECONDS))
  if [ "$left" -lt 15 ]; then note "$log: skipped, ${left} s left before the deadline"; return 124; fi
  [ "$limit" -gt "$left" ] && limit=$left
  timed "$limit" "$log" "$@"
}
# Runs every kiln_gpu_tests test that FILTER matches in its own process, as ctest does (a test
# whose process used CUDA before forking ranks leaves those ranks unable to start), each under an
# optional wrapper (e.g. compute-sanitizer ...), all output to $out/LOG, the whole capped at LIMIT.
gtest_each() {
  local limit=$1 log=$2 filter=$3 names; shift 3
  names=$(build/kiln_gpu_tests --gtest_list_tests --gtest_filter="$filter" \
    | awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }' | tr '\n' ' ')
  if [ -z "${names// /}" ]; then
    note "$log: no test matches '$filter' (or build/kiln_gpu_tests could not list them)"
    return 1
  fi
  # Every test runs; the step's exit is the last failure's, and a test that ended without a
  # verdict line (a crash) still leaves one: "[ EXITED code ] name".
  capped "$limit" "$log" bash -c 'rc=0
    for t in '"$names"'; do
      "$@" build/kiln_gpu_tests --gtest_filter="$t" || { rc=$?; echo "[ EXITED $rc ] $t"; }
    done
    exit $rc' _ "$@"
}
# The overlap bench's table rows and footer, without the per-group lines.
overlap_rows() { [ -f "$1" ] && grep -v "^#   group" "$1" | grep -E "^ +[0-9]+x|shape|^# " | tee -a "$out/summary.txt"; }
# Every multi-GPU test candidate (tests/candidates, not the single-GPU kb1 ones) through
# `kiln bench candidate` on allgather at -g GPUS, each capped at LIMIT s and judged within
# TIME_LIMIT s; a line per candidate in the summary.
judge_candidates() {
  local gpus=$1 limit=$2 time_limit=$3 source name code
  mkdir -p "$out/candidates"
  for source in tests/candidates/*.cu; do
    name=$(basename "$source" .cu)
    [[ $name == kb1_* || $name == reduce_sum_cub ]] && continue
    capped "$limit" "candidates/$name.txt" build/kiln bench candidate --problem allgather \
      --source "$source" -g "$gpus" --sizes 64K,1M,16M --timeout 20 --time-limit "$time_limit" \
      --json "$out/candidates/$name.json"
    code=$?
    [ -f "$out/candidates/$name.txt" ] || break  # the deadline
    echo "$name (exit $code): $(grep -E '^# candidate' "$out/candidates/$name.txt" | tail -1)" \
      | tee -a "$out/summary.txt"
  done
}
# Runs the asked steps in order (step_<name>, dashes as underscores), packing before each one and
# at the end, with nvidia-smi dmon beside them.
run_steps() {
  nvidia-smi dmon -s pct -o T > "$out/dmon.txt" 2>&1 &
  local dmon=$! s
  # shellcheck disable=SC2064  # the pid is known now
  trap "kill $dmon 2> /dev/null" EXIT
  for s in $steps; do
    declare -F "step_${s//-/_}" > /dev/null || { note "unknown step $s"; continue; }
    pack
    note "== $s at $SECONDS s"
    "step_${s//-/_}"
  done
  note "done at $SECONDS s"
  pack
}
