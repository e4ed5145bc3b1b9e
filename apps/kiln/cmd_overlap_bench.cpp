// `kiln overlap bench`: GEMM + ReduceScatter / AllReduce with kiln's signaling overlap against
// serial and decomposition baselines, one process per GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/kiln/commands.hpp"
#include "apps/kiln/rank_flags.hpp"
#include "bench/result_envelope.hpp"
#include "benchmarks/collective/collective_bench.hpp"
#include "benchmarks/overlap/overlap_bench.hpp"
#include "comm/communicator.hpp"
#include "comm/launch_env.hpp"
#include "comm/rank_launch.hpp"
#include "comm/rank_provenance.hpp"
#include "core/error.hpp"
#include "core/fill.hpp"
#include "core/provenance.hpp"

namespace kiln::app {
namespace {

struct OverlapFlags {
  std::string op = "rs";
  std::string dtype = "bf16";
  std::string layout = "nk";
  std::vector<std::string> shapes;
  std::string plan;
  std::vector<int> caps;
  std::vector<int> ce_caps;
  std::vector<int> swizzles;
  std::vector<std::string> signals;
  std::vector<std::string> comms;
  int gpus = 0;
  int ranks_per_gpu = 0;
  int warmup = 5;
  int iterations = 20;
  int sweep_iterations = 5;
  int rounds = 4;
  double settle_seconds = 1.0;
  std::string inputs = "uniform";
  bool ab_copy_streams = false;
  bool ab_chunked_streams = false;
  int check = 1;
  bool spin_wait = false;
  double timeout = 60.0;
  std::string json_path;
};

benchmarks::OverlapBenchOptions to_options(const OverlapFlags& f, int world) {
  benchmarks::OverlapBenchOptions o;
  o.op = overlap::parse_overlap_op(f.op, "--op");
  o.dtype = core::parse_dtype(f.dtype, "-d");
  o.layout = overlap::parse_weight_layout(f.layout, "--layout");
  for (const std::string& s : f.shapes) o.shapes.push_back(overlap::parse_shape(s, "--shape"));
  if (o.shapes.empty()) o.shapes = overlap::default_overlap_shapes();
  if (f.plan == "auto") {
    o.automatic_plan = true;
  } else if (!f.plan.empty()) {
    o.plan = overlap::parse_plan(f.plan, "--plan");
  }
  if (!f.caps.empty()) {
    for (int cap : f.caps) {
      KILN_REQUIRE(cap >= 0 && cap % 2 == 0,
                   fmt::format("--caps {}: must be 0 (every SM) or even (2-CTA clusters)", cap));
    }
    o.caps = f.caps;
  }
  if (!f.ce_caps.empty()) {
    for (int cap : f.ce_caps) {
      KILN_REQUIRE(cap >= 0 && cap % 2 == 0,
                   fmt::format("--ce-caps {}: must be 0 (every SM) or even (2-CTA clusters)", cap));
    }
    o.ce_caps = f.ce_caps;
  }
  if (!f.swizzles.empty()) {
    for (int swizzle : f.swizzles) {
      KILN_REQUIRE(swizzle == 1 || swizzle == 2 || swizzle == 4 || swizzle == 8,
                   fmt::format("--swizzles {}: accepted 1, 2, 4, 8", swizzle));
    }
    o.swizzles = f.swizzles;
  }
  if (!f.comms.empty()) {
    for (const std::string& transport : f.comms) {
      KILN_REQUIRE(transport == "nccl" || transport == "ce" || transport == "ce2",
                   fmt::format("--comms {}: accepted nccl, ce, ce2", transport));
    }
    o.transports = f.comms;
  }
  if (!f.signals.empty()) {
    o.deferred_signals.clear();
    for (const std::string& mode : f.signals) {
      KILN_REQUIRE(mode == "eager" || mode == "deferred",
                   fmt::format("--signals {}: accepted eager, deferred", mode));
      o.deferred_signals.push_back(mode == "deferred");
    }
  }
  KILN_REQUIRE(
      f.rounds >= 1 && f.rounds <= f.iterations,
      fmt::format("--rounds {}: accepted range 1..{} (the -n iterations)", f.rounds, f.iterations));
  o.rounds = f.rounds;
  KILN_REQUIRE(f.settle_seconds >= 0 && f.settle_seconds <= 60,
               fmt::format("--settle-seconds {}: accepted range 0..60", f.settle_seconds));
  o.settle_seconds = f.settle_seconds;
  o.inputs = core::parse_value_distribution(f.inputs, "--inputs");
  o.ab_copy_streams = f.ab_copy_streams;
  o.ab_chunked_streams = f.ab_chunked_streams;
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  o.sweep_iterations = f.sweep_iterations;
  o.check = f.check != 0;
  o.spin_wait = f.spin_wait;
  o.timeout_seconds = f.timeout;
  o.world_size = world;
  return o;
}

int rank_main(const comm::RankInfo& info, const benchmarks::OverlapBenchOptions& o,
              const std::string& json_path, core::Provenance provenance) {
  comm::Communicator comm(info, o.timeout_seconds);
  const std::vector<benchmarks::RankDevice> devices = benchmarks::gather_rank_devices(comm);
  const bool printer = comm.rank() == 0;
  if (printer) {
    fmt::print("# kiln overlap bench: GEMM + {} {}, B {}, {} inputs, {} rank(s), NCCL {}; {}\n",
               o.op == overlap::OverlapOp::kReduceScatter ? "ReduceScatter" : "AllReduce",
               core::dtype_name(o.dtype), overlap::weight_layout_name(o.layout),
               core::value_distribution_name(o.inputs), comm.size(), comm::nccl_version(),
               o.plan             ? "plan " + overlap::to_string(*o.plan)
               : o.automatic_plan ? std::string("plan: the tuner's per shape (--plan auto)")
                                  : std::string("plan: best of a sweep"));
    fmt::print(
        "# times in us: median over {} iterations (warm-up {}) of the max over ranks; "
        "kiln includes the reorder to row-major, kiln-nr does not; kiln-cr: ReduceScatter with "
        "contiguous row blocks (PyTorch's layout), where M splits into whole tiles per rank\n",
        o.iterations, o.warmup);
    for (const benchmarks::RankDevice& d : devices)
      fmt::print("#  Rank {:2} device {:2} [{}] {}\n", d.rank, d.device, d.bus_id, d.name);
    fmt::print("{}\n", benchmarks::format_overlap_header());
    std::fflush(stdout);
  }
  bool all_correct = true;
  std::vector<double> speedups, choice_speedups;
  if (printer) {
    comm::add_rank_provenance(provenance, comm, benchmarks::device_labels(devices));
    if (!json_path.empty()) std::filesystem::remove(json_path);  // no stale report survives
  }
  std::vector<benchmarks::OverlapRow> so_far;
  const std::vector<benchmarks::OverlapRow> rows =
      benchmarks::run_overlap_bench(comm, o, [&](const benchmarks::OverlapRow& row) {
        all_correct = all_correct && row.correct;
        speedups.push_back(row.speedup_vs_serial);
        choice_speedups.push_back(row.choice.empty() ? row.speedup_vs_serial
                                                     : row.speedup_choice_vs_serial);
        if (!printer) return;
        fmt::print("{}\n{}", benchmarks::format_overlap_row(row),
                   benchmarks::format_overlap_row_details(row, o.automatic_plan));
        std::fflush(stdout);
        // The JSON after every shape ("complete": false until the last): a call cut by its time
        // limit keeps the shapes it measured.
        so_far.push_back(row);
        if (!json_path.empty()) {
          nlohmann::json partial = benchmarks::overlap_bench_json(o, so_far, comm.size());
          partial["complete"] = false;
          const auto parent = std::filesystem::path(json_path).parent_path();
          if (!parent.empty()) std::filesystem::create_directories(parent);
          core::write_json_file(json_path, bench::result_envelope(provenance, "overlap", partial));
        }
      });
  if (printer) {
    const auto geo_mean = [](const std::vector<double>& v) {
      double log_sum = 0.0;
      for (double s : v) log_sum += std::log(s);
      return std::exp(log_sum / static_cast<double>(std::max<std::size_t>(v.size(), 1)));
    };
    // With --plan auto on a ReduceScatter, also the geo-mean of kiln's choice of algorithm per
    // shape (the plan where no choice was made).
    const bool chose = std::any_of(rows.begin(), rows.end(), [](const benchmarks::OverlapRow& r) {
      return !r.choice.empty();
    });
    fmt::print(
        "# geo-mean speedup vs serial: {:.3f}{}{}; correctness: {}\n", geo_mean(speedups),
        chose ? fmt::format("; kiln's choice of algorithm per shape: {:.3f}",
                            geo_mean(choice_speedups))
              : std::string(),
        comm.shares_gpu() ? " (ranks share GPUs: not meaningful)" : "",
        o.check ? (all_correct ? "OK (rel. error <= 1e-2 everywhere)" : "FAILED") : "not checked");
    if (!json_path.empty()) {
      nlohmann::json result = benchmarks::overlap_bench_json(o, rows, comm.size());
      result["complete"] = true;
      bench::write_result(json_path, provenance, "overlap", result);
    }
  }
  return o.check && !all_correct ? 1 : 0;
}

void add_overlap_flags(CLI::App* cmd, OverlapFlags& f) {
  cmd->add_option("--op", f.op, "rs (ReduceScatter) | ar (AllReduce)")->capture_default_str();
  cmd->add_option("--shape", f.shapes,
                  "per-GPU GEMM MxNxK, repeatable (default: the six shapes of the shape set)");
  cmd->add_option("-d,--datatype", f.dtype, "bf16|fp16")->capture_default_str();
  cmd->add_option("--layout", f.layout, "nk (B stored N×K, C = A·Bᵀ) | kn (B stored K×N)")
      ->capture_default_str();
  cmd->add_option("--plan", f.plan,
                  "fixed plan, e.g. \"tile=128x256 cap=128 raster=n swizzle=8 signal=eager "
                  "groups=1,2,2,3\"; auto: the tuner's plan per shape (plan cache, saved or "
                  "built-in profile, nearest neighbour, default); "
                  "default: sweep tiles, CTA caps and partitions and keep the fastest");
  cmd->add_option("--caps", f.caps,
                  "CTA caps the sweep tries with comm=nccl (0 = every SM, else even; default 0 124 "
                  "120)");
  cmd->add_option("--ce-caps", f.ce_caps,
                  "CTA caps the sweep tries with comm=ce (default 0 128: copy engines need no SM, "
                  "a cap only evens out the waves)");
  cmd->add_option("--swizzles", f.swizzles,
                  "scheduler swizzles the sweep tries: 1, 2, 4, 8 (default 1 8)");
  cmd->add_option("--signals", f.signals,
                  "signal modes the sweep tries: eager, deferred (default: both)");
  cmd->add_option("--comms", f.comms,
                  "transports the sweep tries: nccl (collective per group), ce (copy engines, "
                  "reduced in the reorder), ce2 (AllReduce: copy engines in two phases, each "
                  "rank reducing its 1/W beside the GEMM) (default: nccl ce)");
  cmd->add_option("--rounds", f.rounds,
                  "rounds over which the final figures interleave serial, decomposition and kiln")
      ->capture_default_str();
  cmd->add_option("--settle-seconds", f.settle_seconds,
                  "seconds of cuBLAS GEMMs back to back before each shape's final figures, so "
                  "that every contender runs at the clock a sustained load holds (0: none)")
      ->capture_default_str();
  cmd->add_option("--inputs", f.inputs,
                  "values of A and B: uniform (in [-1, 1), kiln's records) | normal (N(0, 1), "
                  "torch.randn's; a power-capped GEMM's clock depends on the operands' bits)")
      ->capture_default_str();
  cmd->add_flag("--ab-copy-streams", f.ab_copy_streams,
                "with a copy-engine plan at 3 or more ranks, also time it with a copy stream per "
                "peer (each group's copies at once), interleaved with the rest");
  cmd->add_flag("--ab-chunked-streams", f.ab_chunked_streams,
                "ReduceScatter: also time the chunked ReduceScatter with its chunks alternating "
                "between two compute streams, interleaved with the default one (an A/B)");
  cmd->add_option("-g,--ngpus", f.gpus, "GPUs (ranks) on this host; 0 = all visible")
      ->capture_default_str();
  add_ranks_per_gpu_flag(cmd, f.ranks_per_gpu);
  cmd->add_option("-w,--warmup_iters", f.warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("-n,--iters", f.iterations, "timed iterations")->capture_default_str();
  cmd->add_option("--sweep-iters", f.sweep_iterations, "timed iterations per swept plan")
      ->capture_default_str();
  cmd->add_option("-c,--check", f.check, "check kiln against the serial result (0/1)")
      ->capture_default_str();
  cmd->add_flag("--spin-wait", f.spin_wait,
                "wait for groups with a spin kernel instead of stream memory operations");
  cmd->add_option("--timeout", f.timeout, "seconds any wait may take before ranks abort")
      ->capture_default_str();
  cmd->add_option("--json", f.json_path, "write results with provenance to this file");
}

}  // namespace

void register_overlap_bench(CLI::App& overlap, Runner& run) {
  auto flags = std::make_shared<OverlapFlags>();
  CLI::App* cmd = overlap.add_subcommand(
      "bench", "GEMM + ReduceScatter/AllReduce: serial, decomposition and kiln's overlap");
  add_overlap_flags(cmd, *flags);
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) -> int {
      core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
      return launch_benchmark_ranks<benchmarks::OverlapBenchOptions>(
          "kiln overlap bench", flags->gpus, flags->ranks_per_gpu,
          [&](int world) { return to_options(*flags, world); },
          [](const benchmarks::OverlapBenchOptions& o) { benchmarks::validate(o, -1); },
          [&](const comm::RankInfo& info, const benchmarks::OverlapBenchOptions& o) {
            return rank_main(info, o, flags->json_path, provenance);
          });
    };
  });
}

}  // namespace kiln::app
