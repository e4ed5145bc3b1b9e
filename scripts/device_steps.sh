# Sourced by the step-based device scripts (device_shared_gpu.sh, device_restructure.sh) after they
# set `out` (a work folder), `archive` (the name packed into $OUT) and `steps` (the steps asked
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
