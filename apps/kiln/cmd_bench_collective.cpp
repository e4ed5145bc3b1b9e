// `kiln bench collective`: nccl-tests-style flags and table, one process per GPU.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/kiln/commands.hpp"
#include "apps/kiln/rank_flags.hpp"
#include "bench/result_envelope.hpp"
#include "benchmarks/collective/bus_bandwidth.hpp"
#include "benchmarks/collective/collective_bench.hpp"
#include "comm/communicator.hpp"
#include "comm/launch_env.hpp"
#include "comm/rank_launch.hpp"
#include "comm/rank_provenance.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "core/provenance.hpp"
#include "core/size_parse.hpp"

namespace kiln::app {
namespace {

struct CollectiveFlags {
  std::string op = "allreduce";
  std::string dtype = "fp32";
  std::string min_bytes = "1M";
  std::string max_bytes = "1G";
  std::string factor = "2";
  int gpus = 0;  // 0: all visible
  int ranks_per_gpu = 0;
  int warmup = 5;
  int iterations = 20;
  int check = 1;
  double timeout = 60.0;
  std::string json_path;
  bool dry_run = false;
  std::string profile = "h200-sxm";
  int debug_hang_rank = -1;
  bool nccl_nonblocking = false;
};

benchmarks::CollectiveBenchOptions to_options(const CollectiveFlags& f, int world_size) {
  benchmarks::CollectiveBenchOptions o;
  o.op = comm::parse_op(f.op, "-o");
  o.dtype = core::parse_dtype(f.dtype, "-d");
  o.min_bytes = core::parse_size(f.min_bytes, "-b");
  o.max_bytes = core::parse_size(f.max_bytes, "-e");
  o.factor = core::parse_size(f.factor, "-f");
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  o.check = f.check;
  o.timeout_seconds = f.timeout;
  o.world_size = world_size;
  o.debug_hang_rank = f.debug_hang_rank;
  o.nccl_nonblocking = f.nccl_nonblocking;
  return o;
}

// Without GPUs: what the sweep will move and the floor the spec-sheet interconnect sets.
int dry_run(const benchmarks::CollectiveBenchOptions& o, const std::string& profile_name) {
  const core::HardwareProfile& profile = core::find_profile(profile_name);
  const double factor = benchmarks::bus_factor(o.op, o.world_size);
  fmt::print("# kiln bench collective --dry-run: {} {} on {} rank(s); nothing is measured\n",
             comm::op_name(o.op), core::dtype_name(o.dtype), o.world_size);
  fmt::print(
      "# floor = size x busbw factor ({:.3f}) / {} GB/s per direction ({}, spec sheet: {})\n",
      factor, profile.interconnect_gbps_per_direction, profile.display_name, profile.interconnect);
  fmt::print("# {:>12} {:>13} {:>14} {:>14} {:>12}\n", "size (B)", "count", "send/rank (B)",
             "recv/rank (B)", "floor (us)");
  for (std::uint64_t size : benchmarks::message_sizes(o.min_bytes, o.max_bytes, o.factor)) {
    const comm::CollectiveCounts c =
        comm::counts_for(o.op, size, core::dtype_size(o.dtype), o.world_size);
    const double floor_us = static_cast<double>(c.bytes) * factor /
                            (profile.interconnect_gbps_per_direction * 1e9) * 1e6;
    fmt::print("  {:>12} {:>13} {:>14} {:>14} {:>12.2f}\n", c.bytes, c.total_count,
               c.send_count * core::dtype_size(o.dtype), c.recv_count * core::dtype_size(o.dtype),
               floor_us);
  }
  return 0;
}

int rank_main(const comm::RankInfo& info, const benchmarks::CollectiveBenchOptions& o,
              const std::string& json_path, core::Provenance provenance) {
  comm::Communicator comm(
      info, o.timeout_seconds,
      o.nccl_nonblocking ? comm::NcclMode::kNonBlocking : comm::NcclMode::kBlockingDataPath);
  const std::vector<benchmarks::RankDevice> devices = benchmarks::gather_rank_devices(comm);
  const bool printer = comm.rank() == 0;
  if (printer) {
    fmt::print(
        "# kiln bench collective: {} {}, {} rank(s), launcher {}, NCCL {} ({} communicator)\n",
        comm::op_name(o.op), core::dtype_name(o.dtype), comm.size(), info.launcher,
        comm::nccl_version(),
        o.nccl_nonblocking ? "non-blocking" : "blocking, after a non-blocking bootstrap");
    fmt::print(
        "# sizes {}..{} x{}, warm-up {}, iterations {}, check {}, timeout {:.0f} s; "
        "time = median over iterations of the max over ranks\n",
        o.min_bytes, o.max_bytes, o.factor, o.warmup, o.iterations, o.check, o.timeout_seconds);
    for (const benchmarks::RankDevice& d : devices) {
      fmt::print("#  Rank {:2} Pid {:7} device {:2} [{}] {}\n", d.rank, d.pid, d.device, d.bus_id,
                 d.name);
    }
    fmt::print("{}\n", benchmarks::format_table_header(o));
    std::fflush(stdout);
  }
  std::uint64_t total_wrong = 0;
  double busbw_sum = 0.0;
  const std::vector<benchmarks::CollectiveRow> rows =
      benchmarks::run_collective_bench(comm, o, [&](const benchmarks::CollectiveRow& row) {
        total_wrong += row.wrong;
        busbw_sum += row.busbw_gbps;
        if (printer) {
          fmt::print("{}\n", benchmarks::format_row(o, row));
          std::fflush(stdout);
        }
      });
  if (printer) {
    fmt::print("# Wrong elements    : {} {}\n", total_wrong,
               o.check ? (total_wrong == 0 ? "OK" : "FAILED") : "(not checked)");
    fmt::print("# Avg bus bandwidth : {:.2f} GB/s\n#\n",
               busbw_sum / static_cast<double>(rows.size()));
    std::fflush(stdout);
    if (!json_path.empty()) {
      comm::add_rank_provenance(provenance, comm, benchmarks::device_labels(devices));
      nlohmann::json result = benchmarks::collective_bench_json(o, rows, comm.size());
      result["launcher"] = info.launcher;
      bench::write_result(json_path, provenance, "collective", result);
    }
  }
  return o.check && total_wrong != 0 ? 1 : 0;
}

void add_collective_flags(CLI::App* cmd, CollectiveFlags& f) {
  cmd->add_option("-o,--op", f.op,
                  "allreduce|reducescatter|allgather|alltoall|broadcast|reduce|sendrecv")
      ->capture_default_str();
  cmd->add_option("-d,--datatype", f.dtype, "bf16|fp16|fp32|int32")->capture_default_str();
  cmd->add_option("-b,--minbytes", f.min_bytes, "smallest size (K/M/G suffixes, powers of 1024)")
      ->capture_default_str();
  cmd->add_option("-e,--maxbytes", f.max_bytes, "largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", f.factor, "multiply the size by this each step")
      ->capture_default_str();
  cmd->add_option("-g,--ngpus", f.gpus,
                  "GPUs (ranks) on this host; 0 = all visible. Under mpirun/srun/torchrun the "
                  "launcher sets the ranks: omit -g (or give the same number)")
      ->capture_default_str();
  add_ranks_per_gpu_flag(cmd, f.ranks_per_gpu);
  cmd->add_option("-w,--warmup_iters", f.warmup, "warm-up iterations per size")
      ->capture_default_str();
  cmd->add_option("-n,--iters", f.iterations, "timed iterations per size")->capture_default_str();
  cmd->add_option("-c,--check", f.check, "check results against the expected values (0/1)")
      ->capture_default_str();
  cmd->add_option("--timeout", f.timeout,
                  "seconds any collective may take before every rank aborts")
      ->capture_default_str();
  cmd->add_flag("--nccl-nonblocking", f.nccl_nonblocking,
                "keep the NCCL communicator non-blocking for every call (more launch overhead; by "
                "default only initialisation is non-blocking)");
  cmd->add_option("--json", f.json_path, "write results with provenance to this file");
  cmd->add_flag("--dry-run", f.dry_run,
                "no GPU needed: print sizes, counts and the spec-sheet interconnect floor");
  cmd->add_option("--device,--profile", f.profile,
                  "hardware key for --dry-run floors (kiln profiles lists them; --profile: the old "
                  "spelling, kept for one release)")
      ->capture_default_str();
  cmd->add_option("--debug-hang-rank", f.debug_hang_rank,
                  "fault injection: this rank stops calling collectives (tests the watchdog)")
      ->group("");  // hidden
}

}  // namespace

void register_bench_collective(CLI::App& bench, Runner& run) {
  auto flags = std::make_shared<CollectiveFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "collective",
      "NCCL collective bandwidth, nccl-tests style: one process per GPU, time = max over ranks");
  add_collective_flags(cmd, *flags);
  cmd->callback([flags, &run]() {
    run = [flags](const Invocation& invocation) -> int {
      core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
      if (flags->dry_run) {
        benchmarks::CollectiveBenchOptions o =
            to_options(*flags, flags->gpus > 0 ? flags->gpus : 1);
        benchmarks::validate(o, -1);
        return dry_run(o, flags->profile);
      }
      return launch_benchmark_ranks<benchmarks::CollectiveBenchOptions>(
          "kiln bench collective", flags->gpus, flags->ranks_per_gpu,
          [&](int world) { return to_options(*flags, world); },
          [](const benchmarks::CollectiveBenchOptions& o) { benchmarks::validate(o, -1); },
          [&](const comm::RankInfo& info, const benchmarks::CollectiveBenchOptions& o) {
            return rank_main(info, o, flags->json_path, provenance);
          });
    };
  });
}

}  // namespace kiln::app
