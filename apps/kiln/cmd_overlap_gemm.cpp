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

namespace kiln::app {

void register_overlap_gemm(CLI::App& overlap, Runner& run) {
  struct Flags {
    std::string dtype = "bf16", layout = "nk", json_path;
    std::vector<std::string> shapes;
    int warmup = 5, iterations = 20, rounds = 4;
    std::vector<int> caps = {128, 124, 120};
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = overlap.add_subcommand(
      "gemm", "one GPU: signaling GEMM vs cuBLAS over scheduler orders; reorder overhead");
  cmd->add_option("--shape", flags->shapes, "MxNxK, repeatable (default: the shape set)");
  cmd->add_option("-d,--datatype", flags->dtype, "bf16|fp16")->capture_default_str();
  cmd->add_option("--layout", flags->layout, "nk | kn")->capture_default_str();
  cmd->add_option("-w,--warmup_iters", flags->warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("-n,--iters", flags->iterations, "timed iterations")->capture_default_str();
  cmd->add_option("--rounds", flags->rounds,
                  "rounds over which the final figures interleave the variants")
      ->capture_default_str();
  cmd->add_option("--caps", flags->caps, "CTA caps timed for the best schedule (even, >= 2)")
      ->capture_default_str();
  cmd->add_option("--json", flags->json_path, "write results with provenance to this file");
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) -> int {
      benchmarks::OverlapGemmOptions o;
      o.dtype = core::parse_dtype(flags->dtype, "-d");
      KILN_REQUIRE(o.dtype == core::DType::kBf16 || o.dtype == core::DType::kFp16,
                   "-d " + flags->dtype + ": accepted bf16, fp16");
      o.layout = overlap::parse_weight_layout(flags->layout, "--layout");
      for (const std::string& s : flags->shapes)
        o.shapes.push_back(overlap::parse_shape(s, "--shape"));
      if (o.shapes.empty()) o.shapes = overlap::default_overlap_shapes();
      KILN_REQUIRE(flags->warmup >= 0 && flags->iterations >= 1, "-w must be >= 0 and -n >= 1");
      KILN_REQUIRE(flags->rounds >= 1 && flags->rounds <= flags->iterations,
                   fmt::format("--rounds {}: accepted range 1..{} (the -n iterations)",
                               flags->rounds, flags->iterations));
      for (int cap : flags->caps) {
        KILN_REQUIRE(cap >= 2 && cap % 2 == 0,
                     fmt::format("--caps {}: must be even and >= 2 (2-CTA clusters)", cap));
      }
      o.warmup = flags->warmup;
      o.iterations = flags->iterations;
      o.rounds = flags->rounds;
      o.caps = flags->caps;
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
        correct = correct && row.gemm_relative_error <= 1e-2 && row.rmsnorm_relative_error <= 1e-2;
      if (!flags->json_path.empty()) {
        core::add_current_device_provenance(provenance);
        nlohmann::json result;
        result["dtype"] = core::dtype_name(o.dtype);
        result["layout"] = overlap::weight_layout_name(o.layout);
        result["rows"] = nlohmann::json::array();
        for (const auto& row : rows)
          result["rows"].push_back(benchmarks::overlap_gemm_row_to_json(row));
        bench::write_result(flags->json_path, provenance, "overlap-gemm", result);
      }
      fmt::print("# correctness: {}\n", correct ? "OK" : "FAILED");
      return correct ? 0 : 1;
    };
  });
}

}  // namespace kiln::app
