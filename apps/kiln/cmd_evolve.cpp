// `kiln evolve`: the evolution engine (issue 20, first slice). `strategies` lists the catalog;
// `run` searches one problem's kernel space (map problems for now), judging every generated
// kernel with `kiln bench candidate`, and writes the evaluation log, the best kernel and a report.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <cuda_runtime.h>

#include "apps/kiln/commands.hpp"
#include "bench/candidate_library.hpp"
#include "bench/problem.hpp"
#include "bench/suite_plot.hpp"
#include "bench/torch_baseline.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/hardware_profile.hpp"
#include "core/provenance.hpp"
#include "core/run_command.hpp"
#include "core/wall_clock.hpp"
#include "evolve/build_slots.hpp"
#include "evolve/candidate_evaluator.hpp"
#include "evolve/confirmation.hpp"
#include "evolve/export.hpp"
#include "evolve/report_plot.hpp"
#include "evolve/run_replay.hpp"
#include "evolve/search.hpp"
#include "evolve/seed_list.hpp"
#include "evolve/set_order.hpp"
#include "evolve/set_summary.hpp"
#include "evolve/strategy.hpp"
#include "evolve/strategy_pool.hpp"
#include "evolve/sum_generator.hpp"
#include "problems/registry.hpp"
#include "roofline/roofline.hpp"

namespace kiln::app {
namespace {

int list_strategies() {
  fmt::print("{:<24} {:<13} {:<10} {:<40} {}\n", "strategy", "group", "addresses", "families",
             "knobs");
  for (const evolve::Strategy& s : evolve::strategy_catalog()) {
    std::vector<std::string> families, knobs;
    for (const evolve::Family f : s.families) families.push_back(evolve::family_name(f));
    for (const evolve::Knob& k : s.knobs)
      knobs.push_back(fmt::format("{}={}{}", k.name, fmt::join(k.values, "|"),
                                  k.form ? " (form)" : ""));
    fmt::print("{:<24} {:<13} {:<10} {:<40} {}\n", s.name, s.group,
               evolve::resource_name(s.addresses), fmt::format("{}", fmt::join(families, ",")),
               fmt::format("{}", fmt::join(knobs, " ")));
  }
  return 0;
}

struct RunFlags {
  std::string problem, size = "small", out, pool, build_cache;
  std::string seeds_file;  // --seeds: hand-picked genomes to start from
  // Printed before each line of a run's progress (`evolve set --parallel-problems`: the problem).
  std::string label;
  int parallel_problems = 1;  // `evolve set`: problems searched at once
  // `evolve set`: compile-heavy problems searched at once while light ones are left (0: half of
  // parallel_problems, at least 1).
  int heavy_problems = 0;
  int budget = 40, population = 12, warmup = 5, iterations = 20, trials = 3, timeout = 60;
  int confirm = 3;
  // Correctness trials per screened candidate. Its screened calls end with one more call compared
  // with the reference on other inputs, and what a search reports is confirmed with --trials, so
  // one trial is enough to rank by; each trial costs ~15 passes over the inputs and outputs
  // (fingerprints, reference, compare, the determinism call): 65 ms at KernelBench's map size.
  int screen_trials = 1;
  std::string timing = "screen";
  std::uint64_t seed = 1;
  bool random = false, resume = false, seed_naive = false, judge_alone = false;
  bool uniform_knobs = false;  // knob mutations uniform over knobs (the search before 2026-11-30b)
  // Each batch judged by a launch of its own instead of the judge server kept up between them.
  bool launch_per_batch = false;
  bool nvcc_only = false;
  bool release_judge_setup = false;  // the server frees the problem's set-up after each batch
  bool ncu = false;                  // Nsight Compute counters of each new best guide the mutations
};

void add_launch_per_batch_flag(CLI::App* cmd, RunFlags& f) {
  cmd->add_flag("--launch-per-batch", f.launch_per_batch,
                "judge each batch in a `kiln bench candidate` launch of its own (default: one "
                "judge process kept up for the whole search, `--serve`, which saves the process "
                "start, CUDA context and problem set-up of every batch)");
}

void add_nvcc_only_flag(CLI::App* cmd, RunFlags& f) {
  cmd->add_flag("--nvcc-only", f.nvcc_only,
                "build every screened candidate whole with nvcc (default: generated kernels "
                "marked for it are built split, device code by NVRTC and host code by the host "
                "compiler, 1.6-2.4x less compile time in a search; verdicts and exports are built "
                "by nvcc either way)");
}

void require_ncu_if_asked(const RunFlags& f) {
  if (std::string ignored; f.ncu && core::run_command("command -v ncu > /dev/null", ignored) != 0)
    throw UsageError("--ncu: ncu (Nsight Compute) is not on PATH");
}

void add_ncu_flag(CLI::App* cmd, RunFlags& f) {
  cmd->add_flag("--ncu", f.ncu,
                "profile each kernel that beats the run's best so far with Nsight Compute (DRAM "
                "and SM throughput, warps active; `kiln bench candidate --in-process` under ncu, "
                "in the GPU's turn) and let what the counters show guide the mutations of its "
                "children (DRAM-saturated: fewer bytes; issue-bound: fewer instructions; "
                "latency-bound: more in flight). The counters go into the log, so --resume and "
                "`evolve replay` retrace the same path");
}

// The run's identity: a resumed run must match it (its log's evaluations hold only for the same
// problem, size, judge settings and GPU).
nlohmann::json run_identity(const RunFlags& f) {
  cudaDeviceProp prop{};
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  nlohmann::json identity = {{"problem", f.problem},
                             {"size", f.size},
                             {"seed", f.seed},
                             {"random", f.random},
                             {"device", prop.name},
                             {"warmup", f.warmup},
                             {"iterations", f.iterations},
                             {"trials", f.trials},
                             {"population", f.population},
                             {"seed_naive", f.seed_naive},
                             {"timing", f.timing},
                             {"screen_trials", f.timing == "screen" ? f.screen_trials : f.trials}};
  if (f.ncu) identity["ncu"] = true;  // absent in runs recorded before --ncu (and without it)
  // Recorded either way from 2026-11-30b; absent in older runs, which picked knobs uniformly.
  identity["uniform_knobs"] = f.uniform_knobs;
  return identity;
}

// The default pool: $XDG_CACHE_HOME/kiln, else ~/.cache/kiln.
std::string default_pool() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = cache != nullptr && *cache ? std::string(cache)
                           : home != nullptr          ? std::string(home) + "/.cache"
                                                      : std::string("/tmp");
  return base + "/kiln/strategy_pool.json";
}

// The pool at `path` (missing: empty), older entries' categories refined with their problems'
// kinds.
evolve::StrategyPool load_pool(const std::string& path) {
  evolve::StrategyPool pool = evolve::StrategyPool::load(path);
  pool.refine_categories([](const std::string& problem) { return evolve::problem_kind(problem); });
  return pool;
}

// The problem's pool key on this GPU: its category (with the problem's kind), the binding resource
// and size class of its roofline on the GPU's spec ceilings, fp32, the architecture.
evolve::PoolKey pool_key(const RunFlags& f) {
  const bench::Problem* problem =
      bench::select_problems(problems::problem_registry(), {f.problem}, "--problem").front();
  bench::ProblemSize size;
  for (const bench::ProblemSize& s : problem->sizes())
    if (s.name == f.size) size = s;
  cudaDeviceProp prop{};
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const auto profile = core::profile_for_device_name(prop.name);
  const std::string kind = evolve::problem_kind(f.problem);
  evolve::PoolKey key{bench::category_name(problem->category()) + (kind.empty() ? "" : "/" + kind),
                      "memory", "large",
                      core::dtype_name(problem->fixed_dtype().value_or(core::DType::kFp32)),
                      fmt::format("sm_{}{}", prop.major, prop.minor)};
  if (profile) {
    const core::DType dtype = problem->fixed_dtype().value_or(core::DType::kFp32);
    const roofline::RooflineResult roof = roofline::evaluate(
        problem->cost(size, dtype, 1), roofline::ceilings_from_profile(*profile));
    key.binding = roofline::resource_name(roof.binding);
    key.size_class = evolve::size_class_of(roof.seconds * 1e6);
  }
  return key;
}

// Written to a temporary file and renamed: a run killed mid-write leaves the last checkpoint.
void write_atomically(const std::filesystem::path& path, const nlohmann::json& value) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  core::write_json_file(tmp.string(), value);
  std::filesystem::rename(tmp, path);
}

// Where a run's time went (wall seconds, BatchVerdicts); the caller holds its mutex.
nlohmann::json engine_seconds_json(const evolve::BatchVerdicts& b) {
  return {{"compile", b.compile_seconds},          {"judge", b.judge_seconds},
          {"judge_phases", b.judge_phase_seconds}, {"gpu_wait", b.gpu_wait_seconds},
          {"alone_judge", b.alone_judge_seconds},  {"alone_judgements", b.alone_judgements}};
}

int run_evolve(const RunFlags& f) {
  const std::string tag = f.label.empty() ? "" : f.label + ": ";
  const std::optional<evolve::Family> family = evolve::generated_family(f.problem);
  if (!family)
    throw UsageError(fmt::format("--problem {}: no kernel generator for it yet ({})", f.problem,
                                 evolve::generated_problems_text()));
  if (f.seed_naive && !evolve::whole_sum_element(f.problem))
    throw UsageError(
        fmt::format("--seed-naive: only for whole-array sums (reduce-sum-int32), "
                    "not {}",
                    f.problem));
  if (f.seed_naive && f.random)
    throw UsageError("--seed-naive and --random: the random baseline takes no seeds");
  if (!f.seeds_file.empty() && f.random)
    throw UsageError("--seeds and --random: the random baseline takes no seeds");
  if (!f.seeds_file.empty() && f.seed_naive)
    throw UsageError("--seeds and --seed-naive: --seed-naive starts from the naive kernel alone");
  if (f.ncu && f.random)
    throw UsageError("--ncu and --random: the random baseline takes no guidance");
  if (f.uniform_knobs && f.random)
    throw UsageError("--uniform-knobs and --random: the random baseline mutates no knobs");
  require_ncu_if_asked(f);
  KILN_REQUIRE(f.budget >= 1 && f.budget <= 100000,
               fmt::format("--budget {}: accepted range 1..100000", f.budget));
  KILN_REQUIRE(f.trials >= 1 && f.trials <= 1000,
               fmt::format("--trials {}: accepted range 1..1000", f.trials));
  KILN_REQUIRE(f.screen_trials >= 1 && f.screen_trials <= 1000,
               fmt::format("--screen-trials {}: accepted range 1..1000", f.screen_trials));
  {
    const bench::Problem* problem =
        bench::select_problems(problems::problem_registry(), {f.problem}, "--problem").front();
    std::vector<std::string> names;
    for (const bench::ProblemSize& s : problem->sizes()) names.push_back(s.name);
    KILN_REQUIRE(
        std::find(names.begin(), names.end(), f.size) != names.end(),
        fmt::format("--size {}: {} accepts {}", f.size, f.problem, fmt::join(names, ", ")));
  }
  std::filesystem::create_directories(f.out);
  const std::filesystem::path log_path = std::filesystem::path(f.out) / "log.json";
  const std::filesystem::path run_path = std::filesystem::path(f.out) / "run.json";
  if (f.resume && (!std::filesystem::exists(log_path) || !std::filesystem::exists(run_path)))
    throw UsageError(fmt::format("--resume: {} holds no run (log.json, run.json)", f.out));
  if (!f.resume && std::filesystem::exists(log_path))
    throw UsageError(fmt::format("--out {}: holds a run already (--resume to continue it)", f.out));
  const nlohmann::json identity = run_identity(f);
  nlohmann::json checkpoint = nlohmann::json::array();
  if (f.resume) {
    nlohmann::json recorded = nlohmann::json::parse(std::ifstream(run_path));
    // Runs recorded before --timing existed were judged with guarded timing.
    if (recorded.is_object() && !recorded.contains("timing")) recorded["timing"] = "guarded";
    // Runs recorded before --screen-trials screened with --trials.
    if (recorded.is_object() && !recorded.contains("screen_trials") && recorded.contains("trials"))
      recorded["screen_trials"] = recorded["trials"];
    // Runs recorded before knob sensitivity picked knobs uniformly (a random run picks none): a
    // guided one resumed with --uniform-knobs takes the same path.
    if (recorded.is_object() && !recorded.contains("uniform_knobs"))
      recorded["uniform_knobs"] = !recorded.value("random", false);
    if (recorded != identity) {
      throw UsageError(fmt::format("--resume: {} was a different run ({}); this one is {}", f.out,
                                   recorded.dump(), identity.dump()));
    }
    checkpoint = nlohmann::json::parse(std::ifstream(log_path));
    fmt::print("# {}resuming from {} evaluations in {}\n", tag, checkpoint.size(),
               log_path.string());
  }
  write_atomically(run_path, identity);
  evolve::CandidateEvaluatorOptions eo;
  eo.kiln = std::filesystem::read_symlink("/proc/self/exe").string();
  eo.problem = f.problem;
  eo.size = f.size;
  eo.folder = (std::filesystem::path(f.out) / "candidates").string();
  eo.warmup = f.warmup;
  eo.iterations = f.iterations;
  eo.trials = f.timing == "screen" ? f.screen_trials : f.trials;
  eo.timeout_seconds = f.timeout;
  eo.timing = f.timing;
  eo.build_cache = f.build_cache;
  if (!f.judge_alone) eo.batch = std::make_shared<evolve::BatchVerdicts>();
  eo.serve = eo.batch != nullptr && !f.launch_per_batch;
  eo.split_build = !f.nvcc_only;
  eo.release_setup = f.release_judge_setup;
  eo.ncu = f.ncu;
  // A resumed run profiles only kernels that beat the best its log already holds.
  for (const auto& entry : checkpoint)
    eo.ncu_above = std::max(eo.ncu_above, entry.at("evaluation").value("fitness", 0.0));
  evolve::SearchOptions so;
  so.budget = f.budget;
  so.population = f.population;
  so.elites = std::min(2, f.population - 1);
  so.seed = f.seed;
  so.random_only = f.random;
  so.uniform_knobs = f.uniform_knobs;
  so.allowed = evolve::generated_strategies(f.problem);
  so.grow_from_seeds = f.seed_naive;
  // Each batch compiles ahead on every core while nothing else runs; the judge then reuses it.
  so.prepare = evolve::candidate_preparer(
      eo, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  // Seeds from the strategy pool: what worked on this problem's nearest neighbours.
  const std::string pool_path = f.pool.empty() ? default_pool() : f.pool;
  evolve::StrategyPool pool = load_pool(pool_path);
  const evolve::PoolKey key = pool_key(f);
  // A resumed run takes the seeds its first part took (the pool may have changed since), so
  // that it retraces the same path.
  const std::filesystem::path seeds_path = std::filesystem::path(f.out) / "seeds.json";
  std::vector<evolve::Genome> seeds;
  if (f.resume && std::filesystem::exists(seeds_path)) {
    for (const auto& g : nlohmann::json::parse(std::ifstream(seeds_path)))
      seeds.push_back(evolve::Genome::from_json(g, seeds_path.string()));
  } else if (f.seed_naive) {
    seeds.push_back(evolve::naive_sum_genome());
  } else if (!f.random) {
    // --seeds' genomes for this problem first, then the pool's up to half the population.
    if (!f.seeds_file.empty()) {
      seeds = evolve::seeds_for(evolve::read_seed_list(f.seeds_file), f.seeds_file, f.problem,
                                *family, so.allowed);
      KILN_REQUIRE(static_cast<int>(seeds.size()) <= f.population,
                   fmt::format("--seeds {}: {} genomes for {}, more than --population {}",
                               f.seeds_file, seeds.size(), f.problem, f.population));
      fmt::print("# {}{} seed(s) from {}\n", tag, seeds.size(), f.seeds_file);
    }
    const int from_pool = std::max(0, f.population / 2 - static_cast<int>(seeds.size()));
    for (const evolve::Genome& g : evolve::pool_seeds(pool, key, *family, from_pool, f.problem,
                                                      so.allowed, f.seed ^ 0x9e3779b97f4a7c15ull))
      if (std::none_of(seeds.begin(), seeds.end(), [&](const evolve::Genome& s) { return s == g; }))
        seeds.push_back(g);
  }
  nlohmann::json seeds_json = nlohmann::json::array();
  for (const evolve::Genome& g : seeds) seeds_json.push_back(g.to_json());
  write_atomically(seeds_path, seeds_json);
  fmt::print("# {}pool {}: {} entries, {} seed(s) for {}/{}/{}/{}/{}\n", tag, pool_path,
             pool.size(), seeds.size(), key.category, key.binding, key.size_class, key.dtype,
             key.arch);
  // A resumed run retraces its log without judging: nothing of it needs compiling again.
  if (!checkpoint.empty()) {
    std::set<std::uint64_t> logged;
    for (const auto& entry : checkpoint)
      logged.insert(evolve::Genome::from_json(entry.at("genome"), "log.json").hash());
    so.prepare = [compile = so.prepare, logged](const std::vector<evolve::Genome>& batch) {
      std::vector<evolve::Genome> fresh;
      for (const evolve::Genome& g : batch)
        if (!logged.count(g.hash())) fresh.push_back(g);
      if (!fresh.empty()) compile(fresh);
    };
  }
  const auto start = std::chrono::steady_clock::now();
  int evaluated = 0;
  double best_so_far = 0.0;
  std::vector<evolve::Individual> so_far;
  const evolve::SearchResult result = evolve::search(
      *family, so, evolve::resuming_evaluator(checkpoint, evolve::candidate_evaluator(eo)), seeds,
      [&](const evolve::Individual& i) {
        ++evaluated;
        so_far.push_back(i);
        write_atomically(log_path, evolve::history_to_log(so_far));  // the checkpoint
        // A resumed run first replays its log's evaluations (no time spent): from the first new
        // one on, where this segment's time went so far (a run cut by a time limit leaves no
        // report).
        const int replayed = static_cast<int>(checkpoint.size());
        if (eo.batch && evaluated > replayed) {
          nlohmann::json engine;
          {
            const std::lock_guard lock(eo.batch->mutex);
            engine = engine_seconds_json(*eo.batch);
          }
          engine["seconds"] = core::seconds_since(start);
          engine["evaluations"] = evaluated - replayed;  // this segment's
          write_atomically(std::filesystem::path(f.out) / "engine.json", engine);
        }
        best_so_far = std::max(best_so_far, i.evaluation.fitness());
        const double seconds = core::seconds_since(start);
        fmt::print(
            "{}[{:>4}/{}] {:>6.1f} s  U {:.3f}  best {:.3f}  {:<24} {}{}\n", tag, evaluated,
            f.budget, seconds, i.evaluation.fitness(), best_so_far, i.origin, i.genome.describe(),
            i.evaluation.correct ? "" : "  REJECTED: " + i.evaluation.failure.substr(0, 120));
        std::fflush(stdout);
      });
  const double search_seconds = core::seconds_since(start);
  write_atomically(log_path, evolve::history_to_log(result.history));
  // The run's result: its best screened kernels judged again with guarded timing (the verdict
  // an outside kernel gets), the best of those confirmed; a guarded run's best as it stands.
  evolve::Individual best = result.best;
  nlohmann::json confirmations = nlohmann::json::array();
  std::set<std::uint64_t> rejected_by_confirmation;
  if (f.timing == "screen" && f.confirm > 0) {
    // The best --confirm first (the best of each work mapping before the runners-up of one:
    // screened timing can misjudge a whole structure); when the guarded judge rejects them all,
    // the next ones, up to three rounds.
    const std::vector<evolve::Individual> ranked =
        evolve::confirmation_order(result.history, 3 * f.confirm);
    evolve::CandidateEvaluatorOptions co = eo;
    co.timing = "guarded";
    co.trials = f.trials;    // the verdict's trials, not the screen's
    co.serve = false;        // the verdict: each confirmation round in a process of its own
    co.split_build = false;  // and built whole by nvcc, as `kiln evolve export` builds it
    co.ncu = false;          // the search's guidance is over: nothing to profile for
    std::vector<evolve::Confirmed> confirmed;
    for (std::size_t from = 0; from < ranked.size() && evolve::best_confirmed(confirmed) < 0;
         from += static_cast<std::size_t>(f.confirm)) {
      const std::vector<evolve::Individual> round(
          ranked.begin() + static_cast<std::ptrdiff_t>(from),
          ranked.begin() + static_cast<std::ptrdiff_t>(std::min(
                               ranked.size(), from + static_cast<std::size_t>(f.confirm))));
      co.batch = std::make_shared<evolve::BatchVerdicts>();
      std::vector<evolve::Genome> genomes;
      for (const evolve::Individual& i : round) genomes.push_back(i.genome);
      fmt::print("# {}confirming {} of the best with guarded timing\n", tag, genomes.size());
      std::fflush(stdout);
      evolve::candidate_preparer(
          co, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))(genomes);
      for (evolve::Confirmed& c : evolve::confirm(round, evolve::candidate_evaluator(co)))
        confirmed.push_back(std::move(c));
    }
    for (const evolve::Confirmed& c : confirmed) {
      if (!c.confirmed.correct) rejected_by_confirmation.insert(c.screened.genome.hash());
      confirmations.push_back({{"genome", c.screened.genome.to_json()},
                               {"screened", c.screened.evaluation.to_json()},
                               {"confirmed", c.confirmed.to_json()}});
      fmt::print("# {}screened U {:.3f}, confirmed U {:.3f}{}: {}\n", tag,
                 c.screened.evaluation.fitness(), c.confirmed.fitness(),
                 c.confirmed.correct ? "" : " REJECTED: " + c.confirmed.failure.substr(0, 120),
                 c.screened.genome.describe());
    }
    const int chosen = evolve::best_confirmed(confirmed);
    if (chosen >= 0) {
      best = confirmed[chosen].screened;
      best.evaluation = confirmed[chosen].confirmed;
    } else if (!confirmed.empty()) {
      // None survived: the run has no accepted kernel, and says why with the first one's verdict.
      best = confirmed.front().screened;
      best.evaluation = confirmed.front().confirmed;
    }
  }
  const double seconds = core::seconds_since(start);
  nlohmann::json report;
  report["problem"] = f.problem;
  report["size"] = f.size;
  report["budget"] = f.budget;
  report["seed"] = f.seed;
  report["random_only"] = f.random;
  report["evaluations"] = result.history.size();
  report["cache_hits"] = result.cache_hits;
  report["seconds"] = seconds;
  report["evaluations_per_second"] = result.history.empty() ? 0.0 : result.history.size() / seconds;
  // How screened candidates were built: "split" (NVRTC + the host compiler where the generator
  // marks its source) or "nvcc".
  report["screen_build"] = eo.serve && eo.split_build ? "split" : "nvcc";
  if (eo.batch) {
    // Where this run's time went (the part not here is the search's own and lone judgements).
    const std::lock_guard lock(eo.batch->mutex);
    report["engine_seconds"] = engine_seconds_json(*eo.batch);
    fmt::print("# {}time: compiling {:.1f} s, judging {:.1f} s (", tag, eo.batch->compile_seconds,
               eo.batch->judge_seconds);
    double phases = 0.0;
    for (const auto& [phase, phase_seconds] : eo.batch->judge_phase_seconds) {
      fmt::print("{} {:.1f}, ", phase, phase_seconds);
      phases += phase_seconds;
    }
    fmt::print("launches {:.1f}), waiting for the GPU {:.1f} s, {} judged alone {:.1f} s\n",
               eo.batch->judge_seconds - phases, eo.batch->gpu_wait_seconds,
               eo.batch->alone_judgements, eo.batch->alone_judge_seconds);
  }
  report["search_seconds"] = search_seconds;
  report["timing"] = f.timing;
  report["best"] = {{"genome", best.genome.to_json()},
                    {"evaluation", best.evaluation.to_json()},
                    {"origin", best.origin}};
  report["search_best"] = {{"genome", result.best.genome.to_json()},
                           {"evaluation", result.best.evaluation.to_json()},
                           {"origin", result.best.origin}};
  report["confirmations"] = confirmations;
  for (const auto& [cell, individual] : result.archive)
    report["archive"][cell] = {{"genome", individual.genome.describe()},
                               {"fitness", individual.evaluation.fitness()}};
  core::write_json_file((std::filesystem::path(f.out) / "report.json").string(), report);
  std::ofstream(std::filesystem::path(f.out) / "progress.svg") << evolve::progress_svg(
      evolve::history_to_log(result.history),
      fmt::format("kiln evolve {} {}, seed {}{}: best U accepted so far", f.problem, f.size, f.seed,
                  f.random ? ", random search" : ""));
  std::ofstream(std::filesystem::path(f.out) / "best.cu")
      << evolve::generate_candidate(best.genome, f.problem);
  // What worked goes back to the pool: the best and every elite of the archive.
  // Added to the pool as it is now on disk (runs searched at once share the file), under a lock.
  if (!f.random) {
    static std::mutex pool_file;
    const std::lock_guard hold(pool_file);
    evolve::StrategyPool latest = load_pool(pool_path);
    for (const auto& [cell, individual] : result.archive)
      if (!rejected_by_confirmation.count(individual.genome.hash()))  // the verdict stands
        latest.add({key, individual.genome, individual.evaluation.fitness(), 0.0, f.problem});
    latest.save(pool_path);
  }
  fmt::print("# {}best U {:.3f} ({:.1f} us, T_roof {:.1f} us{}): {}\n", tag,
             best.evaluation.fitness(), best.evaluation.us, best.evaluation.roof_us,
             f.timing == "screen" && f.confirm > 0 ? ", guarded timing" : "",
             best.genome.describe());
  fmt::print(
      "# {}{} evaluations in {:.1f} s ({:.2f} per second), {} cache hits; wrote {}/log.json, "
      "report.json, best.cu\n",
      tag, result.history.size(), seconds, result.history.size() / std::max(seconds, 1e-9),
      result.cache_hits, f.out);
  return best.evaluation.correct ? 0 : 1;
}

// The budget of a finished run in `dir` (its report.json), 0 when there is none or it is
// unreadable (then the run is resumed from its log, or started).
int finished_budget(const std::string& dir) {
  std::ifstream file(std::filesystem::path(dir) / "report.json");
  if (!file) return 0;
  const nlohmann::json report = nlohmann::json::parse(file, nullptr, false);
  if (report.is_discarded() || !report.contains("budget") || !report["budget"].is_number_integer())
    return 0;
  return report["budget"].get<int>();
}

// `kiln evolve set`: run_evolve on every matched problem with a generator, each in OUT/<problem>,
// one pool between them; a problem with a report is done, one with a log is resumed. The summary
// (OUT/summary.json, summary.md) is rewritten after each problem, so a cut set keeps it.
int run_evolve_set(const RunFlags& base, const std::vector<std::string>& patterns,
                   const std::string& torch_json) {
  require_ncu_if_asked(base);  // once, before any problem starts
  std::vector<std::string> names;
  for (const bench::Problem* p :
       bench::select_problems(problems::problem_registry(), patterns, "--problems"))
    if (evolve::generated_family(p->name())) names.push_back(p->name());
  if (names.empty())
    throw UsageError(fmt::format("--problems {}: none of the problems matched has a generator ({})",
                                 fmt::join(patterns, " "), evolve::generated_problems_text()));
  // CUTLASS-built families first, the slowest first (evolve/set_order.hpp): an attention
  // candidate links two GEMM units and is judged slowest (2026-11-29f: 218 s for 100
  // evaluations), a matmul links one.
  const auto search_weight = [](const std::string& name) {
    const std::optional<evolve::Family> family = evolve::generated_family(name);
    return family == evolve::Family::kAttention ? 2 : family == evolve::Family::kMatmul ? 1 : 0;
  };
  const auto compile_heavy = [&](const std::string& name) { return search_weight(name) > 0; };
  names = evolve::longest_first(names, search_weight);
  // A seed list that does not fit a problem fails the set before any search starts.
  if (!base.seeds_file.empty()) {
    const std::vector<evolve::SeedLine> lines = evolve::read_seed_list(base.seeds_file);
    for (const std::string& name : names)
      (void)evolve::seeds_for(lines, base.seeds_file, name, *evolve::generated_family(name),
                              evolve::generated_strategies(name));
  }
  // Every problem's judge needs the GPU: without one the set fails once, not once per problem.
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0)
    throw Error("kiln evolve set: no CUDA GPU is visible (every problem is judged on one)");
  const std::map<std::string, double> eager =
      torch_json.empty() ? std::map<std::string, double>{} : bench::load_torch_baseline(torch_json);
  const std::filesystem::path out(base.out);
  std::filesystem::create_directories(out);
  // Problems are taken in order by `parallel_problems` workers: with more than one, a problem's
  // candidates compile on the CPU while another's are judged (one judgement on the GPU at a time,
  // evolve/candidate_evaluator.cpp), and each run's lines carry its problem's name.
  std::vector<std::optional<evolve::SetRow>> slots(names.size());
  std::mutex set_mutex;  // slots, errors, new_evaluations, the summary files, which run
  int errors = 0;
  std::size_t new_evaluations = 0;
  // Which problems a worker took, and how many compile-heavy ones run: at most max_heavy of the
  // workers (at least one) search those at once while light problems are left to take.
  std::vector<bool> started(names.size(), false), heavy(names.size(), false);
  for (std::size_t i = 0; i < names.size(); ++i) heavy[i] = compile_heavy(names[i]);
  int heavy_running = 0, light_running = 0;
  // Half the workers by default. A quarter (the earlier rule) left the matmul searches to the
  // end of a set run: its last 390 s were 8 matmul searches bound by compiling, the GPU idle in 68
  // of 97 samples, while in the first, GPU-bound stretch six light searches waited half their
  // time for the GPU and the host's load was 5 of 16 (H200, 2026-11-29,
  // docs/results/2026-11-29d-three-call-set/). By that call's figures four light searches still
  // keep the GPU busy (each judged a median 34% of its own time).
  const int max_heavy =
      base.heavy_problems > 0 ? base.heavy_problems : std::max(1, base.parallel_problems / 2);
  const auto take = [&]() -> std::optional<std::size_t> {
    const std::lock_guard hold(set_mutex);
    const std::optional<std::size_t> i =
        evolve::next_problem(started, heavy, heavy_running, max_heavy);
    if (i) {
      started[*i] = true;
      heavy_running += heavy[*i] ? 1 : 0;
      light_running += heavy[*i] ? 0 : 1;
      evolve::HeavyBuildSlots::process().set_light_searches(light_running);
    }
    return i;
  };
  const auto set_start = std::chrono::steady_clock::now();
  const auto logged = [](const std::string& dir) -> std::size_t {
    std::ifstream file(std::filesystem::path(dir) / "log.json");
    const nlohmann::json log = nlohmann::json::parse(file, nullptr, false);
    return file && log.is_array() ? log.size() : 0;
  };
  const auto work = [&] {
    for (std::optional<std::size_t> taken = take(); taken; taken = take()) {
      const std::size_t i = *taken;
      RunFlags f = base;
      f.problem = names[i];
      f.out = (out / names[i]).string();
      if (base.parallel_problems > 1) f.label = names[i];
      // Several judge servers are up at once: each frees its problem's set-up after every batch,
      // so that GPU memory holds one problem's buffers at a time (the judge's turn), not one per
      // search (KernelBench's sizes take 6-25 GB each).
      f.release_judge_setup = base.parallel_problems > 1;
      // One build cache for the set: problems of one kind (square, transposed, ... matmuls)
      // generate the same kernels under other names.
      if (f.build_cache.empty()) f.build_cache = (out / "build-cache").string();
      // Done: a report of at least this budget. A smaller one (an earlier pass of a set run at a
      // growing budget) is resumed: its log is retraced, then the search goes on.
      const bool done = finished_budget(f.out) >= f.budget;
      f.resume = !done && std::filesystem::exists(std::filesystem::path(f.out) / "log.json");
      const std::size_t logged_before = logged(f.out);
      // Seconds into the set on the start and finish lines: which problems ran when, and which
      // ran on alone at the end (a set's tail).
      fmt::print("# [{}/{}] {}{} (at {:.0f} s)\n", i + 1, names.size(), names[i],
                 done       ? ": done (report.json of this budget present)"
                 : f.resume ? ": resuming"
                            : "",
                 core::seconds_since(set_start));
      std::fflush(stdout);
      std::string error;
      if (!done) {
        try {
          run_evolve(f);
        } catch (const std::exception& e) {
          error = e.what();
          fmt::print("# {}: {}\n", names[i], error);
        }
      }
      const auto it = eager.find(bench::torch_baseline_key(names[i], f.size));
      evolve::SetRow row = evolve::set_row_from_run(
          names[i], f.out, it == eager.end() ? std::nullopt : std::optional<double>(it->second));
      if (!error.empty()) row.error = error + (row.error.empty() ? "" : "; " + row.error);
      const std::size_t logged_after = logged(f.out);
      if (!done)
        fmt::print("# [{}/{}] {}: ended at {:.0f} s, {} evaluations in all\n", i + 1, names.size(),
                   names[i], core::seconds_since(set_start), logged_after);
      const std::lock_guard hold(set_mutex);
      heavy_running -= heavy[i] ? 1 : 0;
      light_running -= heavy[i] ? 0 : 1;
      // None left: the heavy searches' CUTLASS builds may take every core.
      evolve::HeavyBuildSlots::process().set_light_searches(light_running);
      errors += error.empty() ? 0 : 1;
      new_evaluations += logged_after > logged_before ? logged_after - logged_before : 0;
      slots[i] = row;
      std::vector<evolve::SetRow> so_far;
      for (const auto& slot : slots)
        if (slot) so_far.push_back(*slot);
      const nlohmann::json summary = evolve::summarize_set(so_far);
      write_atomically(out / "summary.json", summary);
      std::ofstream(out / "summary.md") << evolve::summary_markdown(summary);
    }
  };
  std::vector<std::thread> workers;
  const int worker_count =
      std::min(base.parallel_problems, static_cast<int>(std::max<std::size_t>(1, names.size())));
  for (int w = 0; w < worker_count; ++w) workers.emplace_back(work);
  for (std::thread& w : workers) w.join();
  std::vector<evolve::SetRow> rows;
  for (const auto& slot : slots)
    if (slot) rows.push_back(*slot);
  // The set's own wall time (per-problem seconds overlap when problems run at once).
  const double wall = core::seconds_since(set_start);
  write_atomically(out / "set-run.json",
                   {{"parallel_problems", worker_count},
                    {"problems", names.size()},
                    {"heavy_problems", max_heavy},
                    {"new_evaluations", new_evaluations},
                    {"wall_seconds", wall},
                    {"evaluations_per_second", wall > 0 ? new_evaluations / wall : 0.0}});
  fmt::print(
      "# set: {} new evaluations in {:.1f} s of wall time ({:.2f} per second), {} problem(s) "
      "at once; wrote {}\n",
      new_evaluations, wall, wall > 0 ? new_evaluations / wall : 0.0, worker_count,
      (out / "set-run.json").string());
  fmt::print("{}", evolve::summary_markdown(evolve::summarize_set(rows)));
  return errors > 0 ? 1 : 0;  // a problem whose run stopped on an error (a loss is not one)
}

// `kiln evolve summary`: the set summary rebuilt from the run folders in OUT, without a GPU (a
// set run over several calls, or with parts at other settings). A matched problem without a
// folder is listed as not run, and counts as a loss.
int summarize_set_folder(const std::string& dir, const std::vector<std::string>& patterns,
                         const std::string& size, const std::string& torch_json) {
  std::vector<std::string> names;
  for (const bench::Problem* p :
       bench::select_problems(problems::problem_registry(), patterns, "--problems"))
    if (evolve::generated_family(p->name())) names.push_back(p->name());
  if (!std::filesystem::is_directory(dir))
    throw UsageError(fmt::format("--out {}: no such folder", dir));
  std::map<std::string, double> eager_by_problem;
  if (!torch_json.empty()) {
    const std::map<std::string, double> eager = bench::load_torch_baseline(torch_json);
    for (const std::string& name : names)
      if (const auto it = eager.find(bench::torch_baseline_key(name, size)); it != eager.end())
        eager_by_problem[name] = it->second;
  }
  const std::vector<evolve::SetRow> rows =
      evolve::set_rows_from_folder(dir, names, eager_by_problem);
  const nlohmann::json summary = evolve::summarize_set(rows);
  const std::filesystem::path out(dir);
  write_atomically(out / "summary.json", summary);
  std::ofstream(out / "summary.md") << evolve::summary_markdown(summary);
  fmt::print("{}", evolve::summary_markdown(summary));
  return 0;
}

// `kiln evolve show DIR`: a finished or interrupted run's best kernels, from its log.
int show_run(const std::string& dir, int top) {
  const std::filesystem::path log_path = std::filesystem::path(dir) / "log.json";
  std::ifstream file(log_path);
  if (!file) throw UsageError(fmt::format("{}: no log.json (not a kiln evolve run folder)", dir));
  nlohmann::json log;
  try {
    log = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not JSON ({})", log_path.string(), e.what()));
  }
  std::vector<std::pair<double, std::size_t>> ranked;
  int rejected = 0;
  for (std::size_t i = 0; i < log.size(); ++i) {
    const evolve::Evaluation e = evolve::Evaluation::from_json(log[i].at("evaluation"), "log");
    rejected += e.correct ? 0 : 1;
    ranked.push_back({e.fitness(), i});
  }
  std::sort(ranked.rbegin(), ranked.rend());
  fmt::print("# {}: {} evaluations, {} rejected by the judge\n", dir, log.size(), rejected);
  fmt::print("{:>4} {:>6} {:>10} {:>10} {:<24} {}\n", "#", "U", "us", "T_roof", "origin", "genome");
  for (int r = 0; r < top && r < static_cast<int>(ranked.size()); ++r) {
    const nlohmann::json& entry = log[ranked[r].second];
    const evolve::Genome g = evolve::Genome::from_json(entry.at("genome"), "log");
    const evolve::Evaluation e = evolve::Evaluation::from_json(entry.at("evaluation"), "log");
    fmt::print("{:>4} {:>6.3f} {:>10.1f} {:>10.1f} {:<24} {}\n", ranked[r].second + 1, e.fitness(),
               e.us, e.roof_us, entry.value("origin", std::string()), g.describe());
  }
  return 0;
}

}  // namespace

void register_evolve(CLI::App& app, Runner& run) {
  CLI::App* evolve = app.add_subcommand(
      "evolve", "the evolution engine: strategy-coordinated kernel search (see --help)");
  evolve->require_subcommand(1);
  CLI::App* strategies = evolve->add_subcommand("strategies", "list the strategy catalog");
  strategies->callback([&run]() { run = [](const Invocation&) { return list_strategies(); }; });
  auto show = std::make_shared<std::pair<std::string, int>>("", 10);
  CLI::App* show_cmd = evolve->add_subcommand("show", "a run's best kernels, from its log");
  show_cmd->add_option("dir", show->first, "the run's --out folder")->required();
  show_cmd->add_option("--top", show->second, "how many")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  show_cmd->callback([show, &run]() {
    run = [show](const Invocation&) { return show_run(show->first, show->second); };
  });
  auto replays = std::make_shared<std::vector<std::string>>();
  CLI::App* replay_cmd = evolve->add_subcommand(
      "replay",
      "re-run recorded searches on the CPU from their logs (no GPU): does this kiln's search "
      "take each run's recorded path? (exit 1 where one leaves it)");
  replay_cmd->add_option("runs", *replays, "run folders (each a `kiln evolve run --out`)")
      ->required()
      ->check(CLI::ExistingDirectory);
  replay_cmd->callback([replays, &run]() {
    run = [replays](const Invocation&) {
      int left = 0;
      for (const std::string& dir : *replays) {
        const evolve::RunReplay r = evolve::replay_run(dir);
        if (r.same_path) {
          fmt::print("{}: {} evaluations, the recorded path\n", dir, r.recorded);
        } else {
          ++left;
          fmt::print("{}: left the recorded path after {} of {} evaluations: {}\n", dir, r.replayed,
                     r.recorded, r.divergence);
        }
      }
      return left == 0 ? 0 : 1;
    };
  });
  auto exports = std::make_shared<std::pair<std::vector<std::string>, std::string>>();
  CLI::App* export_cmd = evolve->add_subcommand(
      "export",
      "the best kernel of each run as a standalone .cu (kiln's C entry point, "
      "include/kiln/candidate.h copied beside it) and a .json of its strategies and measurements");
  export_cmd->add_option("runs", exports->first, "run folders (each a `kiln evolve run --out`)")
      ->required();
  export_cmd->add_option("--out", exports->second, "folder to write into")->required();
  export_cmd->callback([exports, &run]() {
    run = [exports](const Invocation&) {
      const std::string header = bench::candidate_include_dir() + "/kiln/candidate.h";
      const std::vector<evolve::ExportedKernel> kernels =
          evolve::export_runs(exports->first, exports->second, header);
      const std::filesystem::path out(exports->second);
      for (const evolve::ExportedKernel& k : kernels) {
        fmt::print("{} {}: U {:.3f} -> {} (+ {})\n", k.problem, k.size, k.fitness, k.source_path,
                   std::filesystem::path(k.json_path).filename().string());
        // Each run's search path beside its kernel.
        const nlohmann::json log =
            nlohmann::json::parse(std::ifstream(std::filesystem::path(k.run) / "log.json"));
        std::ofstream(out / (k.problem + "-" + k.size + "-progress.svg")) << evolve::progress_svg(
            log, fmt::format("{} {}: best U accepted so far ({})", k.problem, k.size, k.run));
      }
      std::ofstream(out / "roofline.svg")
          << bench::suite_svg(evolve::roofline_rows(kernels),
                              "kiln evolve export: where the evolved kernels sit on the roofline");
      fmt::print("# wrote {} and a progress plot per kernel\n", (out / "roofline.svg").string());
      return 0;
    };
  });
  auto merge = std::make_shared<std::pair<std::vector<std::string>, std::string>>();
  CLI::App* merge_cmd = evolve->add_subcommand(
      "merge-pools",
      "merge strategy pools (JSON) into one: each genome measured on a problem kept once, at its "
      "best U (no GPU)");
  merge_cmd->add_option("pools", merge->first, "the pools to merge (a missing file is empty)")
      ->required();
  merge_cmd
      ->add_option("--out", merge->second,
                   "the merged pool (may be one of the inputs; written atomically)")
      ->required();
  merge_cmd->callback([merge, &run]() {
    run = [merge](const Invocation&) {
      evolve::StrategyPool merged;
      for (const std::string& path : merge->first) {
        const evolve::StrategyPool pool = load_pool(path);
        fmt::print("# {}: {} entries\n", path, pool.size());
        merged.merge(pool);
      }
      merged.save(merge->second);
      fmt::print("# wrote {}: {} entries\n", merge->second, merged.size());
      return 0;
    };
  });
  struct GenerateFlags {
    std::string problem, genome, out;
  };
  auto generate = std::make_shared<GenerateFlags>();
  CLI::App* generate_cmd = evolve->add_subcommand(
      "generate",
      "write the candidate source one genome translates to for one problem (no GPU; e.g. to "
      "time or profile a configuration by hand with `kiln bench candidate --source`)");
  generate_cmd->add_option("--problem", generate->problem, "a problem with a generator")
      ->required();
  generate_cmd
      ->add_option("--genome", generate->genome,
                   "the genome as JSON, as in a run's log.json: {\"family\": \"matmul\", "
                   "\"strategies\": [...], \"knobs\": {\"strategy.knob\": value}}")
      ->required();
  generate_cmd->add_option("--out", generate->out, "the .cu to write")->required();
  generate_cmd->callback([generate, &run]() {
    run = [generate](const Invocation&) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(generate->genome);
      } catch (const nlohmann::json::exception& e) {
        throw UsageError(fmt::format("--genome: not JSON ({})", e.what()));
      }
      if (j.is_object() && !j.contains("knobs")) j["knobs"] = nlohmann::json::object();  // defaults
      const evolve::Genome g = evolve::Genome::from_json(j, "--genome");
      const std::string source = evolve::generate_candidate(g, generate->problem);
      std::ofstream out(generate->out, std::ios::binary);
      if (!(out << source)) throw UsageError("--out " + generate->out + ": cannot write");
      fmt::print("# {}: {} -> {}\n", generate->problem, g.describe(), generate->out);
      return 0;
    };
  });
  struct SummaryFlags {
    std::vector<std::string> patterns;
    std::string out, size = "kb", torch_json;
  };
  auto summary = std::make_shared<SummaryFlags>();
  CLI::App* summary_cmd = evolve->add_subcommand(
      "summary",
      "rebuild an `evolve set` folder's summary.json and summary.md from its run folders (no GPU; "
      "matched problems without a folder are listed as not run)");
  summary_cmd->add_option("--out", summary->out, "the set's --out folder")->required();
  summary_cmd->add_option("--problems", summary->patterns, "shell-style globs, e.g. 'kb1-*'")
      ->required();
  summary_cmd->add_option("--size", summary->size, "the set's size preset")->capture_default_str();
  summary_cmd->add_option("--torch-json", summary->torch_json,
                          "PyTorch eager's times (scripts/kb1_torch_eager.py --json)");
  summary_cmd->callback([summary, &run]() {
    run = [summary](const Invocation&) {
      return summarize_set_folder(summary->out, summary->patterns, summary->size,
                                  summary->torch_json);
    };
  });
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = evolve->add_subcommand(
      "run",
      "search one problem's kernels (the problems with a generator), each judged by `kiln bench "
      "candidate` on this machine's GPU");
  cmd->add_option("--problem", f->problem,
                  "a problem with a generator: kb1 map problems (e.g. kb1-19-relu), the "
                  "middle-dimension reductions (kb1-47..49, 51..53), the poolings (kb1-41..46), "
                  "the cumulative scans (kb1-89..93), softmax and the norms (kb1-23, 24, 33..40), "
                  "the losses (kb1-94..96, 98..100), the general matmuls (kb1-1..3, 6..11, "
                  "13..18), matrix-vector and row scaling (kb1-4, 12), attention (kb1-97), "
                  "reduce-sum-int32")
      ->required();
  cmd->add_option("--size", f->size,
                  "the problem's size preset (kb1: small|kb; "
                  "reduce-sum-int32: 1e6|1e8|1e9)")
      ->capture_default_str();
  cmd->add_option("--budget", f->budget, "evaluations")->capture_default_str();
  cmd->add_option("--population", f->population, "population size")->capture_default_str();
  cmd->add_option("--seed", f->seed, "random seed (the run is reproducible from it)")
      ->capture_default_str();
  cmd->add_flag("--random", f->random, "plain random search over the same genomes (the baseline)");
  cmd->add_flag("--uniform-knobs", f->uniform_knobs,
                "knob mutations pick a knob uniformly, not by its measured effect on U in this run "
                "(the search before 2026-11-30b; for comparisons)");
  cmd->add_flag("--seed-naive", f->seed_naive,
                "start from the reduction study's first kernel alone (interleaved addressing, "
                "tree in global memory) instead of the pool and random genomes: the ladder test "
                "(reduce-sum-int32)");
  cmd->add_option("--seeds", f->seeds_file,
                  "a list of genomes to start from, one a line: '<problem> <name> <genome JSON>' "
                  "(# comments; the format of scripts/probes/*.txt); this problem's lines join "
                  "the first population before the pool's seeds (a resumed run keeps the seeds "
                  "it started with)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--resume", f->resume,
                "continue the run in --out (its log is the checkpoint, written after every "
                "evaluation)");
  cmd->add_option("--out", f->out, "folder for the log, the report and the best kernel")
      ->required();
  cmd->add_option("--pool", f->pool,
                  "the strategy pool (JSON) to seed from and add to; default "
                  "$XDG_CACHE_HOME/kiln/strategy_pool.json or ~/.cache/kiln/...");
  cmd->add_option("-w,--warmup_iters", f->warmup, "judge: warm-up calls")->capture_default_str();
  cmd->add_option("-n,--iters", f->iterations, "judge: timed calls")->capture_default_str();
  cmd->add_option("--trials", f->trials, "judge: correctness trials")->capture_default_str();
  cmd->add_option("--screen-trials", f->screen_trials,
                  "judge: correctness trials per screened candidate (--timing screen; the "
                  "confirmations take --trials)")
      ->capture_default_str();
  cmd->add_option("--timeout", f->timeout, "judge: seconds any wait may take")
      ->capture_default_str();
  cmd->add_option("--build-cache", f->build_cache,
                  "a folder of compiled candidates by code and flags, shared with other runs "
                  "(default: none; `evolve set` uses OUT/build-cache)");
  cmd->add_option("--timing", f->timing,
                  "judge's timing during the search: screen (calls back to back after an L2 "
                  "flush; the best --confirm kernels are judged again with guarded timing) or "
                  "guarded (every timed call on fresh, checked inputs)")
      ->check(CLI::IsMember({"screen", "guarded"}))
      ->capture_default_str();
  cmd->add_option("--confirm", f->confirm,
                  "with --timing screen: how many of the best kernels to judge again with guarded "
                  "timing (the best confirmed one is the result; when the judge rejects them all, "
                  "the next ones, up to three rounds)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--judge-alone", f->judge_alone,
                "judge every genome in its own launch (default: each generation's genomes in one "
                "launch, a genome whose batch stopped at a crash judged again alone)");
  add_launch_per_batch_flag(cmd, *f);
  add_nvcc_only_flag(cmd, *f);
  add_ncu_flag(cmd, *f);
  cmd->callback([f, &run]() { run = [f](const Invocation&) { return run_evolve(*f); }; });

  auto sf = std::make_shared<RunFlags>();
  auto patterns = std::make_shared<std::vector<std::string>>();
  auto torch_json = std::make_shared<std::string>();
  CLI::App* set = evolve->add_subcommand(
      "set",
      "`evolve run` on every problem of a set that has a generator (OUT/<problem> each, one pool), "
      "then a summary against the roofline and PyTorch eager (OUT/summary.json, summary.md)");
  set->add_option("--problems", *patterns, "shell-style globs of problem names, e.g. 'kb1-*'")
      ->required();
  set->add_option("--size", sf->size, "the problems' size preset")->capture_default_str();
  set->add_option("--budget", sf->budget, "evaluations per problem")->capture_default_str();
  set->add_option("--population", sf->population, "population size")->capture_default_str();
  set->add_option("--seed", sf->seed, "random seed")->capture_default_str();
  set->add_flag("--uniform-knobs", sf->uniform_knobs,
                "as for `evolve run` (e.g. to resume a set recorded before knob sensitivity)");
  set->add_option("--out", sf->out,
                  "folder: a run folder per problem; a problem with a report is done, one with a "
                  "log is resumed")
      ->required();
  set->add_option("--pool", sf->pool, "the strategy pool (default as for `evolve run`)");
  set->add_option("--seeds", sf->seeds_file,
                  "as for `evolve run`: each problem starts from its lines of the list")
      ->check(CLI::ExistingFile);
  set->add_option("--torch-json", *torch_json,
                  "PyTorch eager's times from scripts/kb1_torch_eager.py on this device: adds the "
                  "speedup and the headroom to the summary");
  set->add_option("-w,--warmup_iters", sf->warmup, "judge: warm-up calls")->capture_default_str();
  set->add_option("-n,--iters", sf->iterations, "judge: timed calls")->capture_default_str();
  set->add_option("--trials", sf->trials, "judge: correctness trials")->capture_default_str();
  set->add_option("--screen-trials", sf->screen_trials,
                  "judge: correctness trials per screened candidate (--timing screen; the "
                  "confirmations take --trials)")
      ->capture_default_str();
  set->add_option("--timeout", sf->timeout, "judge: seconds any wait may take")
      ->capture_default_str();
  set->add_option("--timing", sf->timing, "as for `evolve run`: screen or guarded")
      ->check(CLI::IsMember({"screen", "guarded"}))
      ->capture_default_str();
  set->add_option("--confirm", sf->confirm, "as for `evolve run`")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  set->add_option("--parallel-problems", sf->parallel_problems,
                  "problems searched at once: with 2, one problem's candidates compile on the CPU "
                  "cores while another's are judged (the GPU judges one at a time); each run's "
                  "lines are prefixed with its problem. The pool is shared, so a problem's seeds "
                  "depend on which runs finished before it started")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  set->add_option(
         "--heavy-problems", sf->heavy_problems,
         "of those, how many may be compile-heavy (matmul and attention: CUTLASS builds) "
         "while light problems are left to take; 0: half of --parallel-problems (at least "
         "1; more than --parallel-problems: no limit). Heavy problems are taken first, attention "
         "before the matmuls (the longest searches first); when only heavy problems are left "
         "they fill every worker")
      ->check(CLI::Range(0, 8))
      ->capture_default_str();
  add_launch_per_batch_flag(set, *sf);
  add_ncu_flag(set, *sf);
  add_nvcc_only_flag(set, *sf);
  set->callback([sf, patterns, torch_json, &run]() {
    run = [sf, patterns, torch_json](const Invocation&) {
      // Settings that would fail every problem fail the set at once.
      KILN_REQUIRE(sf->budget >= 1 && sf->budget <= 100000,
                   fmt::format("--budget {}: accepted range 1..100000", sf->budget));
      KILN_REQUIRE(sf->trials >= 1 && sf->trials <= 1000,
                   fmt::format("--trials {}: accepted range 1..1000", sf->trials));
      KILN_REQUIRE(sf->screen_trials >= 1 && sf->screen_trials <= 1000,
                   fmt::format("--screen-trials {}: accepted range 1..1000", sf->screen_trials));
      return run_evolve_set(*sf, *patterns, *torch_json);
    };
  });
}

}  // namespace kiln::app
