// `kiln overlap sum`: overlap::sum_parts alone on one GPU against the HBM ceiling (the chunked
// ReduceScatter's final sum and comm=ce2's owner reduction).
#include <fmt/format.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "apps/kiln/commands.hpp"
#include "bench/result_envelope.hpp"
#include "benchmarks/overlap/part_sum_bench.hpp"
#include "comm/local_launcher.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "core/provenance.hpp"
#include "core/size_parse.hpp"
#include "roofline/roofline.hpp"

namespace kiln::app {

namespace {

struct Flags {
  std::string dtype = "bf16", json_path;
  std::vector<int> parts = {2, 4, 8};
  std::vector<std::string> bytes = {"8M", "32M"};
  std::vector<int> ctas = {2, 8};
  int warmup = 5, iterations = 40, rounds = 4;
};

int run_overlap_sum(const Flags& f, const Invocation& invocation) {
  benchmarks::PartSumBenchOptions o;
  o.dtype = core::parse_dtype(f.dtype, "-d");
  o.parts = f.parts;
  o.part_bytes.clear();
  for (const std::string& b : f.bytes) o.part_bytes.push_back(core::parse_size(b, "--bytes"));
  o.ctas_per_sm = f.ctas;
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  o.rounds = f.rounds;
  benchmarks::validate(o);  // bad flags before any device work
  if (comm::count_visible_gpus() == 0) throw Error("kiln overlap sum needs a GPU; none is visible");
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::optional<core::HardwareProfile> profile = core::profile_for_device_name(prop.name);
  const double hbm = profile ? roofline::ceilings_from_profile(*profile).hbm_bytes_per_second : 0.0;
  fmt::print(
      "# kiln overlap sum: {} on {}, HBM ceiling {}; median of {} iterations over {} rounds; bytes "
      "moved = (parts + 1) x bytes/part\n",
      core::dtype_name(o.dtype), prop.name,
      profile ? fmt::format("{:.0f} GB/s ({})", hbm / 1e9, profile->display_name)
              : std::string("unknown (no hardware profile for this device)"),
      o.iterations, o.rounds);
  fmt::print("{}\n", benchmarks::format_part_sum_header());
  std::fflush(stdout);
  const std::vector<benchmarks::PartSumRow> rows = benchmarks::run_part_sum_bench(o, hbm);
  bool same = true;
  for (const auto& row : rows) {
    fmt::print("{}\n", benchmarks::format_part_sum_row(row));
    same = same && row.same_bits_as_first;
  }
  if (!f.json_path.empty()) {
    core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
    core::add_current_device_provenance(provenance);
    nlohmann::json result;
    result["dtype"] = core::dtype_name(o.dtype);
    result["hbm_bytes_per_second"] = hbm;
    result["rows"] = nlohmann::json::array();
    for (const auto& row : rows) result["rows"].push_back(benchmarks::part_sum_row_to_json(row));
    bench::write_result(f.json_path, provenance, "overlap-sum", result);
  }
  fmt::print("# every grid's output: {}\n", same ? "the same bits" : "DIFFERENT bits (a bug)");
  return same ? 0 : 1;
}

}  // namespace

void register_overlap_sum(CLI::App& overlap, Runner& run) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = overlap.add_subcommand(
      "sum", "one GPU: the W-part sum (chunked ReduceScatter, comm=ce2) against the HBM ceiling");
  cmd->add_option("-d,--datatype", f->dtype, "bf16|fp16")->capture_default_str();
  cmd->add_option("--parts", f->parts, "part counts W (1..8)")->capture_default_str();
  cmd->add_option("--bytes", f->bytes, "bytes per part (K/M/G suffixes; multiple of 16)")
      ->capture_default_str();
  cmd->add_option("--ctas-per-sm", f->ctas,
                  "grids timed interleaved: CTAs of 256 threads per SM (2 = beside a GEMM, "
                  "8 = the whole device)")
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", f->warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("-n,--iters", f->iterations, "timed iterations")->capture_default_str();
  cmd->add_option("--rounds", f->rounds, "rounds the grids interleave over")->capture_default_str();
  cmd->add_option("--json", f->json_path, "write results with provenance to this file");
  cmd->callback([f, &run]() {
    run = [f](const Invocation& invocation) { return run_overlap_sum(*f, invocation); };
  });
}

}  // namespace kiln::app
