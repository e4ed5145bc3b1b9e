// `kiln bench suite`: benchmark problems (reference vs kiln solutions) with correctness trials,
// max-over-ranks timing, the phase-aware roofline and the suite metrics fast_p / roof_u.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include <fstream>
#include "apps/kiln/commands.hpp"
#include "apps/kiln/rank_flags.hpp"
#include "bench/candidate_library.hpp"
#include "bench/candidate_verdict.hpp"
#include "bench/judge_requests.hpp"
#include "bench/problem.hpp"
#include "bench/process_device_memory.hpp"
#include "bench/result_envelope.hpp"
#include "bench/suite.hpp"
#include "bench/suite_plot.hpp"
#include "bench/torch_baseline.hpp"
#include "comm/communicator.hpp"
#include "comm/launch_env.hpp"
#include "comm/local_launcher.hpp"
#include "comm/rank_launch.hpp"
#include "comm/rank_provenance.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"
#include "core/stall_watchdog.hpp"
#include "core/startup_trace.hpp"
#include "problems/registry.hpp"

namespace kiln::app {
namespace {

struct SuiteFlags {
  std::vector<std::string> problems, sizes;
  std::string dtype = "bf16", preset = "default", profile, json_path, svg_path, torch_json;
  int gpus = 0, ranks_per_gpu = 0, warmup = 20, iterations = 50, trials = 5;
  double timeout = 60.0;
  bool list = false;
  // Rewrite the JSON after every row ("complete": false until the last), so that a run cut by a
  // time limit or a crash still leaves the rows it measured. Not in a batch judgement, whose
  // driver (kiln evolve) reads a missing JSON as "judge this one again alone".
  bool json_after_every_row = false;
};

int list_problems() {
  fmt::print("{:<22} {:<18} {:<40} {}\n", "problem", "category", "sizes", "solutions");
  for (const auto& p : problems::problem_registry()) {
    std::string sizes, solutions;
    for (const auto& s : p->sizes()) sizes += (sizes.empty() ? "" : ",") + s.name;
    for (const auto& s : p->solutions()) solutions += (solutions.empty() ? "" : ",") + s;
    fmt::print("{:<22} {:<18} {:<40} {}  # {}\n", p->name(), bench::category_name(p->category()),
               sizes, solutions, p->description());
  }
  return 0;
}

void write_svg(const std::string& path, const std::string& svg) {
  std::ofstream file(path);
  file << svg;
  if (!file) throw Error("cannot write " + path);
  fmt::print("# wrote {}\n", path);
}

// One suite run on an existing communicator: rows, metrics, JSON and plot. True when every
// judged row is correct (and, for a candidate, something was judged).
bool judge_suite(comm::Communicator& comm, const bench::SuiteOptions& options, const SuiteFlags& f,
                 core::Provenance provenance, core::StallWatchdog& watchdog) {
  core::trace_point("judging");
  bench::SuiteOptions o = options;
  o.progress = [&watchdog](const std::string& step) { watchdog.progress(step); };
  const bool printer = comm.rank() == 0;
  if (printer) {
    fmt::print(
        "# kiln bench suite: {} rank(s), {}, NCCL {}; {} trials, warm-up {}, {} "
        "iterations; times = median over iterations of the max over ranks (us); {}\n",
        comm.size(), core::dtype_name(o.dtype), comm::nccl_version(), o.trials, o.warmup,
        o.iterations,
        o.screen_timing ? "solution screened (back to back), reference back to back"
                        : "solution and reference each timed as judged calls, in turn");
    fmt::print("{}\n", bench::format_suite_header());
    std::fflush(stdout);
  }
  if (printer) comm::add_rank_provenance(provenance, comm);
  std::vector<bench::SuiteRow> so_far;
  const auto rows =
      bench::run_suite(comm, problems::problem_registry(), o, [&](const bench::SuiteRow& row) {
        if (!row.failure.empty()) fmt::print(stderr, "# rank {}: {}\n", comm.rank(), row.failure);
        if (printer) {
          fmt::print("{}\n", bench::format_suite_row(row));
          std::fflush(stdout);
          so_far.push_back(row);
          if (f.json_after_every_row && !f.json_path.empty()) {
            nlohmann::json partial = bench::suite_json(o, bench::suite_metrics(so_far), so_far);
            partial["complete"] = false;
            const auto parent = std::filesystem::path(f.json_path).parent_path();
            if (!parent.empty()) std::filesystem::create_directories(parent);
            core::write_json_file(f.json_path,
                                  bench::result_envelope(provenance, "suite", partial));
          }
        }
      });
  core::trace_point("judged");
  bool ok = true;
  for (const auto& r : rows) ok = ok && (!r.skipped.empty() || r.correct);
  // A candidate is accepted for what was judged: when every row was skipped (a size this world
  // cannot run), nothing was, and it is not accepted.
  const bool nothing_judged = !o.candidate_library.empty() &&
                              std::none_of(rows.begin(), rows.end(), [](const bench::SuiteRow& r) {
                                return r.skipped.empty();
                              });
  if (nothing_judged) {
    ok = false;
    if (printer) {
      fmt::print("# candidate not judged: every row was skipped ({})\n",
                 rows.empty() ? std::string("no rows") : rows.front().skipped);
    }
  }
  if (printer) {
    const nlohmann::json metrics = bench::suite_metrics(rows);
    if (!metrics.contains("fast_0")) {
      fmt::print("# over {} rows: none measured (every row skipped), so no fast_p / roof_u\n",
                 rows.size());
    } else {
      fmt::print(
          "# over {} rows: fast_0 {:.3f}  fast_1 {:.3f}  fast_1.5 {:.3f}  fast_2 {:.3f}  "
          "roof_0.25 {:.3f}  roof_0.5 {:.3f}  roof_0.75 {:.3f}{}\n",
          rows.size(), metrics.value("fast_0", 0.0), metrics.value("fast_1", 0.0),
          metrics.value("fast_1.5", 0.0), metrics.value("fast_2", 0.0),
          metrics.value("roof_0.25", 0.0), metrics.value("roof_0.5", 0.0),
          metrics.value("roof_0.75", 0.0),
          comm.shares_gpu() ? "  (ranks share GPUs: speed metrics not meaningful)" : "");
    }
    if (!f.json_path.empty()) {
      nlohmann::json result = bench::suite_json(o, metrics, rows);
      if (f.json_after_every_row) result["complete"] = true;
      bench::write_result(f.json_path, provenance, "suite", result);
    }
    if (!f.svg_path.empty()) {
      write_svg(f.svg_path,
                bench::suite_svg(rows, fmt::format("kiln bench suite, {} rank(s), {}", comm.size(),
                                                   core::dtype_name(o.dtype))));
    }
    fmt::print("# correctness: {}\n", ok ? "OK" : "FAILED");
  }
  return ok;
}

int rank_main(const comm::RankInfo& info, const bench::SuiteOptions& options, const SuiteFlags& f,
              core::Provenance provenance) {
  // Outlives everything below: a kernel hung inside a synchronous CUDA call (or inside the
  // destructors that run after a timed-out wait) ends this rank f.timeout + 10 s after the
  // last progress, after the communicator's own timeouts had their chance to say more.
  core::StallWatchdog watchdog(f.timeout + 10.0, info.rank);
  watchdog.progress("connecting the ranks");
  comm::Communicator comm(info, f.timeout);
  return judge_suite(comm, options, f, std::move(provenance), watchdog) ? 0 : 1;
}

}  // namespace

void register_bench_suite(CLI::App& bench, Runner& run) {
  auto f = std::make_shared<SuiteFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "suite", "benchmark problems: reference vs kiln solutions, roofline, fast_p and roof_u");
  cmd->add_option("-g,--ngpus", f->gpus, "GPUs (ranks) on this host; 0 = all visible")
      ->capture_default_str();
  add_ranks_per_gpu_flag(cmd, f->ranks_per_gpu);
  cmd->add_option("--problems", f->problems, "problem names or globs (default: all; see --list)")
      ->delimiter(',');
  cmd->add_option("--sizes", f->sizes, "size presets to run (default: every size of a problem)")
      ->delimiter(',');
  cmd->add_option("-d,--datatype", f->dtype, "bf16|fp16|fp32|int32")->capture_default_str();
  cmd->add_option("--preset", f->preset,
                  "timing preset: default (-w/-n) or pkb (500 warm-up, 100 iterations)")
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", f->warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("-n,--iters", f->iterations, "timed iterations")->capture_default_str();
  cmd->add_option("--trials", f->trials, "correctness trials with fresh inputs")
      ->capture_default_str();
  cmd->add_option("--device,--profile", f->profile,
                  "hardware key for the roofline ceilings (default: the GPU's own; --profile: the "
                  "old spelling, kept for one release)");
  cmd->add_option("--timeout", f->timeout, "seconds any wait may take before the ranks abort")
      ->capture_default_str();
  cmd->add_option("--json", f->json_path, "write results with provenance to this file");
  cmd->add_option("--svg", f->svg_path,
                  "write the roofline plot (U per row, coloured by binding resource) as SVG");
  cmd->add_option("--torch-json", f->torch_json,
                  "PyTorch eager's times (scripts/kb1_torch_eager.py --json) to report each row's "
                  "speedup over");
  cmd->add_flag("--list", f->list, "print the problems, their sizes and solutions; no GPU needed");
  cmd->callback([f, &run]() {
    run = [f](const Invocation& invocation) -> int {
      if (f->list) return list_problems();
      bench::SuiteOptions o;
      o.problems = f->problems;
      o.sizes = f->sizes;
      o.dtype = core::parse_dtype(f->dtype, "-d");
      o.warmup = f->warmup;
      o.iterations = f->iterations;
      o.trials = f->trials;
      o.profile = f->profile;
      if (!f->torch_json.empty()) o.torch_us = bench::load_torch_baseline(f->torch_json);
      bench::apply_timing_preset(o, f->preset);
      KILN_REQUIRE(o.trials >= 1, fmt::format("--trials {}: must be >= 1", o.trials));
      KILN_REQUIRE(o.warmup >= 0 && o.iterations >= 1,
                   fmt::format("-w {} -n {}: need -w >= 0 and -n >= 1", o.warmup, o.iterations));
      (void)bench::select_problems(problems::problem_registry(),
                                   o.problems);  // names checked before any GPU work
      core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
      comm::RankRequest request;
      request.command = "kiln bench suite";
      request.gpus = f->gpus;
      request.ranks_per_gpu = f->ranks_per_gpu;
      const comm::RankLayout layout = comm::resolve_ranks(request);
      SuiteFlags flags = *f;
      flags.json_after_every_row = true;
      // No stale report survives a run that ends before its first row.
      if (!flags.json_path.empty()) std::filesystem::remove(flags.json_path);
      return comm::run_ranks(request, layout, [&](const comm::RankInfo& info) {
        return rank_main(info, o, flags, provenance);
      });
    };
  });
}

namespace {

struct CandidateFlags {
  std::string problem, arch = "sm_90a", build_dir = "/tmp/kiln-candidates", json_path;
  std::string build_cache;  // kiln's own kernels: compiled libraries and units by code and flags
  std::vector<std::string> sources;
  bool json_per_source = false;
  bool skip_reference_timing = false;
  bool reuse_builds = false;
  bool compile_only = false;  // build the libraries (for --reuse-builds) and judge nothing
  bool in_process = false;    // judge in this process: no supervising fork (for Nsight Compute)
  std::string timing = "guarded";
  std::vector<std::string> sizes;
  int gpus = 0, ranks_per_gpu = 0, warmup = 20, iterations = 50, trials = 5, compile_timeout = 300;
  double timeout = 60.0, time_limit = 1800.0;
  double floor_scale = 1.0;
  std::string serve_dir;  // --serve: judge requests from this folder (bench/judge_requests.hpp)
  double serve_idle = 300.0;
  bool serve_release_setup = false;
};

void add_candidate_flags(CLI::App* cmd, CandidateFlags& f) {
  cmd->add_option("--problem", f.problem, "problem name (see `kiln bench suite --list`)")
      ->required();
  cmd->add_option("--source", f.sources,
                  "the candidate's CUDA source file; repeat it to judge several in one launch "
                  "(kiln's own generated kernels: see --json-per-source); required unless --serve");
  cmd->add_option("-g,--ngpus", f.gpus, "GPUs (ranks); 0 = all visible")->capture_default_str();
  add_ranks_per_gpu_flag(cmd, f.ranks_per_gpu);
  cmd->add_option("--sizes", f.sizes, "size presets (default: all of the problem)")->delimiter(',');
  cmd->add_option("--arch", f.arch, "nvcc -arch for the candidate")->capture_default_str();
  cmd->add_option("--build-dir", f.build_dir, "where the shared library goes")
      ->capture_default_str();
  cmd->add_option("--compile-timeout", f.compile_timeout, "seconds nvcc may take")
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", f.warmup, "warm-up iterations")->capture_default_str();
  cmd->add_option("-n,--iters", f.iterations, "timed iterations")->capture_default_str();
  cmd->add_option("--trials", f.trials, "correctness trials")->capture_default_str();
  cmd->add_option("--timeout", f.timeout,
                  "seconds any wait may take before the ranks abort (a hung candidate)")
      ->capture_default_str();
  cmd->add_option("--time-limit", f.time_limit,
                  "seconds the whole judgement may take before every rank is killed")
      ->capture_default_str();
  cmd->add_option("--json", f.json_path, "write results with provenance to this file");
  cmd->add_flag("--json-per-source", f.json_per_source,
                "write each candidate's results beside its source (X.cu -> X.json); required "
                "with several --source");
  cmd->add_option("--timing", f.timing,
                  "guarded: every timed call on fresh inputs, fingerprinted and checked (the "
                  "verdict); screen: calls back to back on one set of inputs after an L2 flush, "
                  "then one more on poisoned outputs checked, no outside-work check (a search's "
                  "ranking of its own "
                  "kernels, never a verdict on an outside one)")
      ->capture_default_str();
  cmd->add_option("--build-cache", f.build_cache,
                  "a folder of compiled libraries and kiln-unit objects by code and flags, shared "
                  "between judgements (e.g. an `evolve set`'s OUT/build-cache): a CUTLASS unit is "
                  "compiled once. For kiln's own kernels only, like --reuse-builds (what is there "
                  "is loaded without being rebuilt)");
  cmd->add_flag("--reuse-builds", f.reuse_builds,
                "load a library that an earlier compile left in --build-dir from the same source "
                "by the same command (kiln evolve's own kernels, compiled ahead); without it each "
                "judgement compiles into a fresh folder of its own, removed afterwards, so that "
                "nothing an earlier candidate wrote there (a candidate runs with the judge's file "
                "permissions) is ever loaded");
  cmd->add_flag("--compile-only", f.compile_only,
                "build each --source's library into --build-dir and stop, judging nothing (no GPU "
                "needed): the compiles of a list of kiln's own kernels run ahead, in parallel, and "
                "the judgements that follow load them (needs --reuse-builds)");
  cmd->add_flag("--skip-reference-timing", f.skip_reference_timing,
                "do not time the reference (its time and the speedup over it read 0): for a "
                "search that ranks candidates by U alone");
  cmd->add_flag("--in-process", f.in_process,
                "judge in this process, one rank, instead of a child that kiln's launcher forks "
                "and supervises: for Nsight Compute, which cannot follow a fork() without exec "
                "(its injected threads leave the child stuck). Without the supervisor, a "
                "candidate that crashes ends this process and --time-limit is not enforced (the "
                "--timeout watchdog still aborts a hung wait): for kiln's own kernels")
      ->group("Profiling");
  cmd->add_option("--floor-scale", f.floor_scale,
                  "multiply the time floor by this (> 0; the judge's own tests raise it to see a "
                  "correct candidate rejected as impossibly fast)")
      ->group("Testing the judge");
  cmd->add_option("--serve", f.serve_dir,
                  "judge batches of compiled candidates as they arrive in this folder "
                  "(request-N files, bench/judge_requests.hpp) in one process, until a stop file, "
                  "--serve-idle seconds without a request, or a candidate that breaks the process: "
                  "kiln evolve's judge, for its own kernels only (one rank)")
      ->group("Judge server");
  cmd->add_option("--serve-idle", f.serve_idle, "seconds --serve waits for a request")
      ->capture_default_str()
      ->group("Judge server");
  cmd->add_flag("--serve-release-setup", f.serve_release_setup,
                "free the problem's set-up (inputs, reference) after a request when less than a "
                "third of the GPU's memory is left free, instead of keeping it for the next: "
                "room for one more set-up (KernelBench's largest take 25 GB) when several servers "
                "are up")
      ->group("Judge server");
}

// The suite options for one candidate, flags checked before anything is compiled.
bench::SuiteOptions candidate_options(const CandidateFlags& f) {
  bench::SuiteOptions o;
  o.problems = {f.problem};
  (void)bench::select_problems(problems::problem_registry(), o.problems, "--problem");
  o.sizes = f.sizes;
  o.warmup = f.warmup;
  o.iterations = f.iterations;
  o.trials = f.trials;
  o.floor_scale = f.floor_scale;
  o.time_reference = !f.skip_reference_timing;
  KILN_REQUIRE(f.timing == "guarded" || f.timing == "screen",
               fmt::format("--timing {}: accepted values are guarded and screen", f.timing));
  o.screen_timing = f.timing == "screen";
  KILN_REQUIRE(o.trials >= 1 && o.warmup >= 0 && o.iterations >= 1,
               "--trials and -n must be >= 1 and -w >= 0");
  KILN_REQUIRE(f.floor_scale > 0 && f.floor_scale <= 1e6,
               fmt::format("--floor-scale {}: accepted range (0, 1e6]", f.floor_scale));
  KILN_REQUIRE(
      f.timeout > 0 && f.time_limit > 0,
      fmt::format("--timeout {} / --time-limit {}: must be > 0 seconds", f.timeout, f.time_limit));
  KILN_REQUIRE(!f.in_process || (f.gpus <= 1 && f.ranks_per_gpu <= 1),
               fmt::format("--in-process judges on one rank in this process: -g 1 (not {}), no "
                           "--ranks-per-gpu above 1 (not {})",
                           f.gpus, f.ranks_per_gpu));
  KILN_REQUIRE(!f.in_process || f.serve_dir.empty(),
               "--in-process and --serve: the judge server supervises its own rank");
  if (!f.serve_dir.empty()) {
    KILN_REQUIRE(f.sources.empty() && f.json_path.empty(),
                 "--serve takes its candidates from the requests: no --source or --json");
    KILN_REQUIRE(f.reuse_builds, "--serve loads libraries compiled ahead: it needs --reuse-builds");
    KILN_REQUIRE(f.gpus == 1, fmt::format("--serve judges on one rank: -g 1, not {}", f.gpus));
    KILN_REQUIRE(f.serve_idle > 0 && f.serve_idle <= 86400,
                 fmt::format("--serve-idle {}: accepted range (0, 86400] seconds", f.serve_idle));
    return o;
  }
  KILN_REQUIRE(!f.sources.empty(), "--source is required (or --serve)");
  KILN_REQUIRE(!f.compile_only || f.reuse_builds,
               "--compile-only keeps what it builds for a later judgement: it needs --reuse-builds "
               "(without it each judgement builds into a folder of its own, removed afterwards)");
  KILN_REQUIRE(f.sources.size() == 1 || (f.json_per_source && f.json_path.empty()),
               fmt::format("--source given {} times: judging several candidates writes each one's "
                           "results beside its source (--json-per-source), not to one --json",
                           f.sources.size()));
  KILN_REQUIRE(!(f.json_per_source && !f.json_path.empty()),
               "--json and --json-per-source: choose one");
  return o;
}

std::string json_beside(const std::string& source) {
  return std::filesystem::path(source).replace_extension(".json").string();
}

// One candidate of a batch, compiled.
struct BatchEntry {
  std::string name, library, json_path;
};

// The device memory this judge process holds between the candidates it takes
// (bench::left_memory_on_device).
struct DeviceMemoryWatch {
  std::optional<bench::ProcessDeviceMemory> held;  // opened at the first reading (a context exists)
  int setups = -1;                                 // the ProblemRunCache's set-up count then
  std::optional<std::size_t> held_bytes;
  bool told_unavailable = false;
  // After candidate `name` was judged (its library unloaded): true when it left memory on the
  // device, and this process should end (its verdict stands).
  bool left_memory(const bench::ProblemRunCache& runs, int rank, const std::string& name) {
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    if (!held) {
      int device = 0;
      KILN_CUDA_CHECK(cudaGetDevice(&device));
      held.emplace(device);
    }
    // The judge's own keep of reference outputs (ProblemRunCache::kept) is not a candidate's
    // leak.
    std::optional<std::size_t> now = held->read();
    if (now) *now -= std::min(*now, runs.kept.bytes());
    if (!now && !told_unavailable) {
      fmt::print(stderr, "# rank {}: the leak check between candidates is off: {}\n", rank,
                 held->why());
      told_unavailable = true;
    }
    const bool same_setup = setups == runs.setups && !runs.entries.empty();
    const bool left = same_setup && now && held_bytes &&
                      bench::left_memory_on_device(*held_bytes, *now, bench::kLeftOnDeviceLimit);
    if (left) {
      fmt::print(stderr,
                 "# rank {}: candidate {} left {} MiB of device memory allocated after it was "
                 "unloaded: this judge process ends after it\n",
                 rank, name, (*now - *held_bytes) >> 20);
    }
    setups = runs.setups;
    held_bytes = now;
    return left;
  }
};

// Several candidates judged one after another by the same ranks: one process start, one CUDA
// context and one communicator for all of them, which is most of a single judgement's cost
// (issue 20's engine speed). Meant for kiln's own generated kernels: a candidate judged here
// shares the process with the next. A candidate that throws, or leaves the CUDA context with an
// error, ends the batch (exit 3): the later candidates then have no results and are judged
// again alone, never in a broken context.
// Judges one candidate of a batch in the ranks' process. 0: judged (accepted or not, the verdict
// in its JSON); 3: the candidate threw or left the CUDA context with an error, so nothing more may
// run in this process (its verdict, if written, is removed: it ran in what it broke).
int judge_batch_entry(comm::Communicator& comm, const bench::SuiteOptions& options,
                      const SuiteFlags& f, const core::Provenance& provenance,
                      core::StallWatchdog& watchdog,
                      const std::shared_ptr<bench::ProblemRunCache>& runs,
                      const BatchEntry& entry) {
  bench::SuiteOptions o = options;
  o.runs = runs;
  o.candidate_library = entry.library;
  o.candidate_name = entry.name;
  SuiteFlags flags = f;
  flags.json_path = entry.json_path;
  bool accepted = false;
  try {
    accepted = judge_suite(comm, o, flags, provenance, watchdog);
  } catch (const std::exception& e) {
    fmt::print(stderr, "# rank {}: batch stopped at candidate {}: {}\n", comm.rank(), entry.name,
               e.what());
    return 3;
  }
  cudaError_t state = cudaDeviceSynchronize();
  if (state == cudaSuccess) state = cudaGetLastError();
  if (state != cudaSuccess) {
    if (comm.rank() == 0) std::filesystem::remove(entry.json_path);
    fmt::print(stderr,
               "# rank {}: batch stopped after candidate {}: the CUDA context is left "
               "with {} ({})\n",
               comm.rank(), entry.name, cudaGetErrorName(state), cudaGetErrorString(state));
    return 3;
  }
  if (comm.rank() == 0)
    fmt::print("# candidate {}: {}\n", entry.name, accepted ? "accepted" : "REJECTED");
  std::fflush(stdout);
  return 0;
}

// Several candidates judged one after another by the same ranks: one process start, one CUDA
// context and one communicator for all of them, which is most of a single judgement's cost
// (issue 20's engine speed). Meant for kiln's own generated kernels: a candidate judged here
// shares the process with the next. A candidate that throws, or leaves the CUDA context with an
// error, ends the batch (exit 3): the later candidates then have no results and are judged
// again alone, never in a broken context.
int batch_rank_main(const comm::RankInfo& info, const bench::SuiteOptions& options,
                    const SuiteFlags& f, const core::Provenance& provenance,
                    const std::vector<BatchEntry>& entries) {
  core::StallWatchdog watchdog(f.timeout + 10.0, info.rank);
  watchdog.progress("connecting the ranks");
  comm::Communicator comm(info, f.timeout);
  // Each problem size is set up once for the whole batch (declared after the communicator, so
  // destroyed before it).
  const auto runs = std::make_shared<bench::ProblemRunCache>();
  DeviceMemoryWatch memory;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BatchEntry& entry = entries[i];
    if (const int code = judge_batch_entry(comm, options, f, provenance, watchdog, runs, entry))
      return code;
    // The later candidates are judged alone, as after a candidate that broke the batch.
    if (i + 1 < entries.size() && memory.left_memory(*runs, comm.rank(), entry.name)) return 3;
  }
  return 0;
}

// --serve: the batch's process kept up between batches, judging each request as it arrives
// (bench/judge_requests.hpp), the problem sizes set up once for all of them.
int serve_rank_main(const comm::RankInfo& info, const bench::SuiteOptions& options,
                    const SuiteFlags& f, const core::Provenance& provenance,
                    const CandidateFlags& cf) {
  core::StallWatchdog watchdog(f.timeout + 10.0, info.rank);
  watchdog.progress("connecting the ranks");
  comm::Communicator comm(info, f.timeout);
  const auto runs = std::make_shared<bench::ProblemRunCache>();
  DeviceMemoryWatch memory;
  bench::ServeOptions so;
  so.idle_seconds = cf.serve_idle;
  return bench::serve_judge_requests(
      cf.serve_dir, so,
      [&](const bench::ServedCandidate& c) {
        std::filesystem::remove(c.json_path);  // only this judgement's verdict counts
        return judge_batch_entry(comm, options, f, provenance, watchdog, runs,
                                 {c.name, c.library, c.json_path}) == 0 &&
               !memory.left_memory(*runs, comm.rank(), c.name);
      },
      [&](int) { watchdog.progress("waiting for a judge request"); },
      [&] {
        if (!cf.serve_release_setup) return;
        // Decided before the answer, while this server still has the judge's turn (so no other
        // server is setting up at the same time).
        KILN_CUDA_CHECK(cudaDeviceSynchronize());
        std::size_t free_bytes = 0, total_bytes = 0;
        KILN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        if (bench::keep_setup_between_requests(free_bytes, total_bytes)) return;
        runs->entries.clear();  // the next request sets the problem up again
        runs->kept.clear();     // and keeps the reference's outputs again
      });
}

// The judgement's ranks: children of kiln's own launcher, or with --in-process rank 0 of 1 run
// here (no fork at all, not even the child that counts the GPUs: a profiler's injected threads
// make any fork() without exec unsafe).
// What the launcher would refuse or give a forked rank is checked and given here too: no outside
// launcher, a visible GPU (a usage error, not a REJECTED verdict), its own NCCL_COMM_ID port.
// One difference stays: the stall watchdog's abort ends this process, leaving no verdict (a
// --json report, if any, says "complete": false).
int run_candidate_ranks(const CandidateFlags& f, const comm::RankRequest& request,
                        const std::function<int(const comm::RankInfo&)>& body) {
  if (!f.in_process) return comm::run_ranks(request, comm::resolve_ranks(request), body);
  (void)comm::plan_ranks(request, comm::rank_from_environment(comm::process_environment()), 1);
  int devices = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&devices); error != cudaSuccess || devices < 1)
    throw UsageError(fmt::format("--in-process: no CUDA GPU is visible on this host{}",
                                 error == cudaSuccess
                                     ? std::string()
                                     : std::string(" (") + cudaGetErrorName(error) + ": " +
                                           cudaGetErrorString(error) + ")"));
  setenv("NCCL_COMM_ID", fmt::format("127.0.0.1:{}", comm::free_loopback_port()).c_str(), 1);
  comm::RankInfo info;
  info.launcher = "kiln --in-process";
  try {
    return body(info);
  } catch (const std::exception& error) {
    fmt::print(stderr, "kiln: rank 0 (in process): error: {}\n", error.what());
    return 1;
  }
}

comm::RankRequest candidate_request(const CandidateFlags& f) {
  // Each rank is a child process of kiln's own launcher: a candidate that crashes or hangs
  // ends its ranks (the launcher says which and how), never this process.
  comm::RankRequest request;
  request.command = "kiln bench candidate";
  request.gpus = f.gpus;
  request.ranks_per_gpu = f.ranks_per_gpu;
  request.allow_outside_launcher = false;
  request.launch.time_limit_seconds = f.time_limit;
  return request;
}

// Where this judgement compiles: --build-dir itself with --reuse-builds, else a fresh folder
// inside it (a name no earlier candidate could know), removed when the judgement ends.
class JudgementBuildDir {
 public:
  explicit JudgementBuildDir(const CandidateFlags& f) {
    if (f.reuse_builds) {
      path_ = f.build_dir;
      return;
    }
    std::filesystem::create_directories(f.build_dir);
    std::string pattern = (std::filesystem::path(f.build_dir) / "judgement-XXXXXX").string();
    KILN_REQUIRE(
        mkdtemp(pattern.data()) != nullptr,
        fmt::format("--build-dir {}: cannot make a folder for this judgement in it", f.build_dir));
    path_ = pattern;
    owned_ = true;
  }
  ~JudgementBuildDir() {
    std::error_code ignored;
    if (owned_) std::filesystem::remove_all(path_, ignored);
  }
  JudgementBuildDir(const JudgementBuildDir&) = delete;
  JudgementBuildDir& operator=(const JudgementBuildDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_ = false;
};

// Several --source: compile each (one that fails is reported and left out), then judge the
// compiled ones in one launch. Exit 0 when every source was compiled and judged (accepted or
// not: each verdict is in its JSON), 1 otherwise.
int judge_candidate_batch(const CandidateFlags& f, const Invocation& invocation) {
  const bench::SuiteOptions o = candidate_options(f);
  // Libraries are named by their source's stem in --build-dir: two sources of one stem would
  // overwrite each other's library and one would be judged as the other.
  std::set<std::string> stems;
  for (const std::string& source : f.sources) {
    const std::string stem = std::filesystem::path(source).stem().string();
    KILN_REQUIRE(stems.insert(stem).second,
                 fmt::format("--source {}: a second candidate named {} (names must differ: each "
                             "one's library and verdict are named after it)",
                             source, stem));
  }
  const JudgementBuildDir build_dir(f);
  std::vector<BatchEntry> entries;
  for (const std::string& source : f.sources) {
    std::filesystem::remove(json_beside(source));  // no stale verdict survives a failure
    try {
      const bench::CandidateBuild build = bench::compile_candidate(
          source, build_dir.path(), f.arch, f.compile_timeout, f.build_cache);
      entries.push_back(
          {std::filesystem::path(source).stem().string(), build.library, json_beside(source)});
    } catch (const UsageError& e) {
      // Left out, with no JSON (kiln evolve judges such a source again alone, or reads its
      // failure from the log): a batch is kiln's own generated kernels, where one that cannot be
      // built (nvcc's error, CUTLASS's headers not found) must not stop the others.
      fmt::print("# candidate {}: not compiled: {}\n", source, e.what());
    }
  }
  if (entries.empty()) return 1;
  if (f.compile_only) {
    fmt::print("# compile-only: {} of {} candidates built in {}\n", entries.size(),
               f.sources.size(), build_dir.path());
    return entries.size() == f.sources.size() ? 0 : 1;
  }
  const core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
  const comm::RankRequest request = candidate_request(f);
  SuiteFlags flags;
  flags.timeout = f.timeout;
  const int code = run_candidate_ranks(f, request, [&](const comm::RankInfo& info) {
    return batch_rank_main(info, o, flags, provenance, entries);
  });
  const bool all = code == 0 && entries.size() == f.sources.size();
  fmt::print("# batch: {} of {} candidates judged{}\n", code == 0 ? entries.size() : std::size_t{0},
             f.sources.size(),
             code == 0 ? "" : fmt::format(" through (the ranks ended with {})", code));
  return all ? 0 : 1;
}

// --serve: one process judging request after request until told to stop (the exit code is the
// ranks': 0 after stop or the idle limit, 3 when a candidate broke the process).
int serve_candidates(const CandidateFlags& f, const Invocation& invocation) {
  const bench::SuiteOptions o = candidate_options(f);
  std::filesystem::create_directories(f.serve_dir);
  const core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
  comm::RankRequest request = candidate_request(f);
  request.launch.time_limit_seconds = 0.0;  // the client limits each request
  const comm::RankLayout layout = comm::resolve_ranks(request);
  SuiteFlags flags;
  flags.timeout = f.timeout;
  const int code = comm::run_ranks(request, layout, [&](const comm::RankInfo& info) {
    return serve_rank_main(info, o, flags, provenance, f);
  });
  fmt::print("# judge server in {} ended with {}\n", f.serve_dir, code);
  return code;
}

int judge_candidate(const CandidateFlags& f, const Invocation& invocation) {
  if (!f.serve_dir.empty()) return serve_candidates(f, invocation);
  bench::SuiteOptions o = candidate_options(f);
  if (f.sources.size() > 1) return judge_candidate_batch(f, invocation);
  const std::string& source = f.sources.front();
  const std::string json_path = f.json_per_source ? json_beside(source) : f.json_path;
  // No stale report survives: the ranks write theirs only when they finish.
  if (!json_path.empty()) std::filesystem::remove(json_path);
  o.candidate_name = std::filesystem::path(source).stem().string();
  core::Provenance provenance = core::host_provenance(invocation.argc, invocation.argv);
  bench::CandidateVerdict verdict;
  verdict.name = o.candidate_name;
  verdict.source = source;
  verdict.problem = f.problem;
  const JudgementBuildDir build_dir(f);
  bench::CandidateBuild build;
  try {
    build = bench::compile_candidate(source, build_dir.path(), f.arch, f.compile_timeout,
                                     f.build_cache);
  } catch (const bench::CandidateBuildError& e) {
    // The candidate's fault, not the caller's: a verdict (exit 1), with nvcc's words.
    fmt::print(stderr, "kiln: {}\n", e.what());
    verdict.exit_code = -1;
    verdict.reason = "did not compile";
    verdict.build_log = e.what();
    bench::record_candidate_verdict(json_path, verdict, provenance);
    fmt::print("# candidate {}: REJECTED (did not compile, see above)\n", o.candidate_name);
    return 1;
  }
  fmt::print("# compiled: {}\n", build.command);
  // What the build reused (kiln-units from the cache, a library built before) opens its log.
  if (build.log.rfind('(', 0) == 0)
    fmt::print("# build: {}\n", build.log.substr(0, build.log.find('\n')));
  if (f.compile_only) {
    fmt::print("# candidate {}: built (--compile-only: not judged)\n", o.candidate_name);
    return 0;
  }
  o.candidate_library = build.library;
  const comm::RankRequest request = candidate_request(f);
  SuiteFlags flags;
  flags.timeout = f.timeout;
  flags.json_path = json_path;
  flags.json_after_every_row = true;
  const int code = run_candidate_ranks(f, request, [&](const comm::RankInfo& info) {
    return rank_main(info, o, flags, provenance);
  });
  verdict.accepted = code == 0;
  verdict.exit_code = code;
  if (code != 0) {
    verdict.reason = bench::rejection_reason(
        code, json_path.empty() ? nlohmann::json() : bench::read_report(json_path), f.time_limit);
  }
  bench::record_candidate_verdict(json_path, verdict, provenance);
  if (code != 0) {
    fmt::print("# candidate {}: REJECTED ({})\n", o.candidate_name,
               code == 124   ? fmt::format("ran past --time-limit {} s", f.time_limit)
               : code >= 128 ? std::string("a rank crashed or was killed, see above")
                             : std::string("incorrect, failed, hung or not judged, see above"));
  } else {
    fmt::print("# candidate {}: accepted\n", o.candidate_name);
  }
  return code == 0 ? 0 : 1;
}

}  // namespace

void register_bench_candidate(CLI::App& bench, Runner& run) {
  auto f = std::make_shared<CandidateFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "candidate",
      "compile an outside CUDA candidate (include/kiln/candidate.h) and judge it on a problem: "
      "correctness over trials, time, speedup over the reference, U");
  add_candidate_flags(cmd, *f);
  cmd->callback([f, &run]() {
    run = [f](const Invocation& invocation) { return judge_candidate(*f, invocation); };
  });
}

void register_bench_plot(CLI::App& bench, Runner& run) {
  struct PlotFlags {
    std::string json_path, svg_path, title;
  };
  auto f = std::make_shared<PlotFlags>();
  CLI::App* cmd = bench.add_subcommand(
      "plot", "roofline plot of a `kiln bench suite --json` file as SVG (no GPU needed)");
  cmd->add_option("--json", f->json_path, "the suite's JSON")->required();
  cmd->add_option("--svg", f->svg_path, "the SVG to write")->required();
  cmd->add_option("--title", f->title, "plot title (default: from the file's provenance)");
  cmd->callback([f, &run]() {
    run = [f](const Invocation&) -> int {
      std::ifstream in(f->json_path);
      if (!in) throw UsageError("--json " + f->json_path + ": cannot read");
      nlohmann::json suite;
      try {
        in >> suite;
      } catch (const std::exception& e) {
        throw UsageError("--json " + f->json_path + ": not JSON (" + e.what() + ")");
      }
      std::string title = f->title;
      if (title.empty()) {
        const nlohmann::json p = suite.value("provenance", nlohmann::json::object());
        title = fmt::format("kiln bench suite, {} rank(s), commit {}, {}", p.value("world_size", 0),
                            p.value("commit", "?"), p.value("date", "?"));
      }
      write_svg(f->svg_path, bench::suite_svg(bench::suite_rows_from_json(suite), title));
      return 0;
    };
  });
}

}  // namespace kiln::app
