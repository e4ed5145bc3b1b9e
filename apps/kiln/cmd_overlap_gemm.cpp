// `kiln overlap gemm`: the signaling GEMM against cuBLAS and the fused reorder's overhead, on one
// GPU.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/kiln/commands.hpp"
#include "bench/result_envelope.hpp"
#include "benchmarks/overlap/overlap_bench.hpp"
#include "benchmarks/overlap/overlap_gemm_bench.hpp"
#include "comm/local_launcher.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"
#include "overlap/plan.hpp"

namespace kiln::app {

namespace {

struct Flags {
  std::string dtype = "bf16", layout = "nk", json_path;
  std::vector<std::string> shapes, configs;
  int warmup = 5, iterations = 20, rounds = 4;
  std::vector<int> caps = {128, 124, 120};
};

void add_flags(CLI::App* cmd, Flags& f) {
  cmd->add_option("--shape", f.shapes, "MxNxK, repeatable (default: the shape set)");
  cmd->add_option("-d,--datatype", f.dtype, "bf16|fp16")->capture_default_str();
  cmd->add_option("--layout", f.layout, "nk | kn")->capture_default_str();
  cmd->add_option("-w,--warmup_iters", f.warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("-n,--iters", f.iterations, "timed iterations")->capture_default_str();
  cmd->add_option("--rounds", f.rounds,
                  "rounds over which the final figures interleave the variants")
      ->capture_default_str();
  cmd->add_option("--caps", f.caps,
                  "CTA caps timed for the best schedule (>= 1; caps that are not whole clusters "
                  "of the chosen kernel are skipped)")
      ->capture_default_str();
  std::string built;
  for (const overlap::GemmConfig& c : overlap::built_gemm_configs())
    built += "\n  \"" + overlap::gemm_config_name(c) + "\"";
  cmd->add_option("--config", f.configs,
                  "GEMM configuration to search, repeatable (default: every one built):" + built);
  cmd->add_option("--json", f.json_path, "write results with provenance to this file");
}

benchmarks::OverlapGemmOptions to_options(const Flags& f) {
  benchmarks::OverlapGemmOptions o;
  o.dtype = core::parse_dtype(f.dtype, "-d");
  KILN_REQUIRE(o.dtype == core::DType::kBf16 || o.dtype == core::DType::kFp16,
               "-d " + f.dtype + ": accepted bf16, fp16");
  o.layout = overlap::parse_weight_layout(f.layout, "--layout");
  for (const std::string& s : f.shapes) o.shapes.push_back(overlap::parse_shape(s, "--shape"));
  if (o.shapes.empty()) o.shapes = overlap::default_overlap_shapes();
  KILN_REQUIRE(f.warmup >= 0 && f.iterations >= 1, "-w must be >= 0 and -n >= 1");
  KILN_REQUIRE(
      f.rounds >= 1 && f.rounds <= f.iterations,
      fmt::format("--rounds {}: accepted range 1..{} (the -n iterations)", f.rounds, f.iterations));
  for (int cap : f.caps) {
    KILN_REQUIRE(cap >= 1 && cap <= 1024, fmt::format("--caps {}: accepted range 1..1024", cap));
  }
  for (const std::string& text : f.configs) {
    const overlap::Plan plan = overlap::parse_plan(text, "--config");
    overlap::Plan only_config;
    only_config.gemm = plan.gemm;
    KILN_REQUIRE(overlap::to_string(plan) == overlap::to_string(only_config),
                 "--config " + text + ": only the keys tile, cluster and kernel");
    o.configs.push_back(plan.gemm);
  }
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  o.rounds = f.rounds;
  o.caps = f.caps;
  return o;
}

int run_overlap_gemm(const Flags& f, const Invocation& invocation) {
  const benchmarks::OverlapGemmOptions o = to_options(f);
  if (comm::count_visible_gpus() == 0)
    throw Error("kiln overlap gemm needs a GPU; none is visible");
  core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
  fmt::print(
      "# kiln overlap gemm: {} B {}, median of {} iterations (us); rst = restore, rms = "
      "RMSNorm, rm = row-major input, reo = slot-ordered input\n",
      core::dtype_name(o.dtype), overlap::weight_layout_name(o.layout), o.iterations);
  fmt::print("{}\n", benchmarks::format_overlap_gemm_header());
  std::fflush(stdout);
  const auto rows =
      benchmarks::run_overlap_gemm_bench(o, [](const benchmarks::OverlapGemmRow& row) {
        fmt::print("{}\n", benchmarks::format_overlap_gemm_row(row));
        std::fflush(stdout);
      });
  bool correct = true;
  for (const auto& row : rows)
    correct = correct && row.gemm_relative_error <= 1e-2 && row.rmsnorm_relative_error <= 1e-2 &&
              row.cutlass_plain_relative_error <= 1e-2;
  if (!f.json_path.empty()) {
    core::add_current_device_provenance(provenance);
    nlohmann::json result;
    result["dtype"] = core::dtype_name(o.dtype);
    result["layout"] = overlap::weight_layout_name(o.layout);
    result["rows"] = nlohmann::json::array();
    for (const auto& row : rows)
      result["rows"].push_back(benchmarks::overlap_gemm_row_to_json(row));
    bench::write_result(f.json_path, provenance, "overlap-gemm", result);
  }
  fmt::print("# correctness: {}\n", correct ? "OK" : "FAILED");
  return correct ? 0 : 1;
}

}  // namespace

void register_overlap_gemm(CLI::App& overlap, Runner& run) {
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = overlap.add_subcommand(
      "gemm", "one GPU: the best signaling GEMM configuration vs cuBLAS; reorder overhead");
  add_flags(cmd, *flags);
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) { return run_overlap_gemm(*flags, invocation); };
  });
}

}  // namespace kiln::app
