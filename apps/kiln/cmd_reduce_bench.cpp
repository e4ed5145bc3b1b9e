// `kiln reduce bench`: reduction variants (the study's ladder and kiln's own) against CUB.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/kiln/commands.hpp"
#include "bench/result_envelope.hpp"
#include "benchmarks/reduce/reduce_bench.hpp"
#include "comm/local_launcher.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"

namespace kiln::app {

namespace {

struct Flags {
  std::string op = "sum", dtype = "int32", sizes = "1e3,1e6,1e8,1e9", json_path;
  std::vector<std::string> variants;
  int misalign = 0, warmup = 5, iterations = 50;
  bool list = false, ncu = false, profile_only = false;
  double ncu_size = 0;
};

void add_flags(CLI::App* cmd, Flags& f) {
  cmd->add_option("--op", f.op, "sum | min | max")->capture_default_str();
  cmd->add_option("-d,--dtype", f.dtype, "int32 | fp32 | bf16 | fp16")->capture_default_str();
  cmd->add_option("--sizes", f.sizes, "element counts, comma-separated (1e3,1e6,2e9 ...)")
      ->capture_default_str();
  cmd->add_option("--variants", f.variants,
                  "preset names (v1 v2a v2b v2c v3a v3b v4 vec vec-atomic) or quoted knob lists "
                  "\"block=512 items=4 vector=16 ...\"; default: every preset");
  cmd->add_option("--misalign", f.misalign,
                  "start the input this many elements after a 256-byte boundary (0..63)")
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", f.warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("-n,--iters", f.iterations, "timed iterations")->capture_default_str();
  cmd->add_option("--json", f.json_path, "write results with provenance to this file");
  cmd->add_flag("--list", f.list, "print the presets and their knobs, then exit");
  cmd->add_flag("--ncu", f.ncu,
                "also read the study's metrics (duration, DRAM throughput, warp execution "
                "efficiency, achieved occupancy, branch efficiency) with Nsight Compute");
  cmd->add_option("--ncu-size", f.ncu_size,
                  "elements for the --ncu profiles (default: the largest of --sizes)");
  cmd->add_flag("--ncu-pass-only,--profile-only", f.profile_only,
                "run each variant once per size and nothing else (what --ncu measures; "
                "--profile-only: the old spelling, kept for one release)");
}

benchmarks::ReduceBenchOptions to_options(const Flags& f) {
  benchmarks::ReduceBenchOptions o;
  o.op = kernels::parse_reduce_op(f.op, "--op");
  o.dtype = core::parse_dtype(f.dtype, "-d");
  o.sizes = benchmarks::parse_sizes(f.sizes, "--sizes");
  for (const std::string& v : f.variants)
    o.variants.push_back(kernels::parse_reduce_variant(v, "--variants"));
  o.misalign = f.misalign;
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  o.ncu = f.ncu;
  KILN_REQUIRE(f.ncu_size >= 0 && f.ncu_size <= 1e13,
               fmt::format("--ncu-size {}: accepted 0 (largest size) .. 1e13", f.ncu_size));
  o.ncu_size = static_cast<std::int64_t>(f.ncu_size);
  o.profile_only = f.profile_only;
  return o;
}

int run_reduce_bench(const Flags& f, const Invocation& invocation) {
  if (f.list) {
    for (const auto& v : kernels::reduce_presets())
      fmt::print("{:<11} {}\n", v.name, kernels::to_string(v));
    return 0;
  }
  const benchmarks::ReduceBenchOptions o = to_options(f);
  benchmarks::validate(o);
  if (comm::count_visible_gpus() == 0)
    throw Error("kiln reduce bench needs a GPU; none is visible");
  core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
  const benchmarks::ReduceBenchReport report = benchmarks::run_reduce_bench(o);
  if (o.profile_only) return 0;
  // Rows that did not run are counted apart: they are no wrong result, but the run is
  // incomplete, so they also make the exit status non-zero.
  bool correct = true;
  int not_run = 0;
  for (const auto& r : report.results) {
    if (!r.failure.empty())
      ++not_run;
    else
      correct = correct && r.correct;
  }
  if (!f.json_path.empty()) {
    core::add_current_device_provenance(provenance);
    bench::write_result(f.json_path, provenance, "reduce", benchmarks::to_json(o, report));
  }
  fmt::print("# correctness: {}\n", correct ? "OK" : "FAILED");
  if (not_run > 0) {
    fmt::print("# {} row(s) did not run: see the note at the end of each (and in --json)\n",
               not_run);
  }
  return correct && not_run == 0 ? 0 : 1;
}

}  // namespace

void register_reduce_bench(CLI::App& reduce, Runner& run) {
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = reduce.add_subcommand(
      "bench", "one GPU: reduction variants vs cub::DeviceReduce (time, GB/s, % of copy, check)");
  add_flags(cmd, *flags);
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) { return run_reduce_bench(*flags, invocation); };
  });
}

}  // namespace kiln::app
