// The judge as evaluator (see candidate_evaluator.hpp).
#include "evolve/candidate_evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "bench/candidate_library.hpp"
#include "core/error.hpp"
#include "core/fifo_turn.hpp"
#include "core/file_lock.hpp"
#include "core/ncu_csv.hpp"
#include "core/run_command.hpp"
#include "core/wall_clock.hpp"
#include "evolve/attention_generator.hpp"
#include "evolve/blas2_generator.hpp"
#include "evolve/build_slots.hpp"
#include "evolve/judge_output.hpp"
#include "evolve/judge_server.hpp"
#include "evolve/kernel_counters.hpp"
#include "evolve/loss_generator.hpp"
#include "evolve/map_generator.hpp"
#include "evolve/matmul_generator.hpp"
#include "evolve/norm_generator.hpp"
#include "evolve/pool_generator.hpp"
#include "evolve/reduce_generator.hpp"
#include "evolve/scan_generator.hpp"
#include "evolve/sum_generator.hpp"

namespace kiln::evolve {

std::string generated_problems_text() {
  return "map: kb1-5, kb1-19..32, kb1-88; middle-dimension reductions: kb1-47..49, kb1-51..53; "
         "softmax and norms: kb1-23, kb1-24, kb1-33..40; poolings: kb1-41..46; scans: "
         "kb1-89..93; losses: kb1-94..96, kb1-98..100; matmuls: kb1-1..3, kb1-6..11, "
         "kb1-13..18; matrix-vector and row scaling: kb1-4, kb1-12; attention: kb1-97; whole-array "
         "sum: "
         "reduce-sum-int32";
}

std::optional<Family> generated_family(const std::string& problem) {
  if (map_expression(problem)) return Family::kMap;
  if (const std::optional<std::string> blas2 = blas2_kind_of(problem))
    return *blas2 == "matvec" ? Family::kReduceAxis : Family::kMap;
  if (middle_reduction_of(problem) || whole_sum_element(problem) || norm_kind_of(problem) ||
      loss_kind_of(problem))
    return Family::kReduceAxis;
  if (scan_kind_of(problem)) return Family::kScan;
  if (matmul_kind_of(problem)) return Family::kMatmul;
  if (is_attention_problem(problem)) return Family::kAttention;
  if (pool_window_of(problem)) return Family::kPooling;
  return std::nullopt;
}

std::string problem_kind(const std::string& problem) {
  if (map_expression(problem)) return "map";
  if (const std::optional<std::string> blas2 = blas2_kind_of(problem)) return *blas2;
  if (middle_reduction_of(problem)) return "middle-reduction";
  if (whole_sum_element(problem)) return "whole-sum";
  if (const std::optional<NormKind> norm = norm_kind_of(problem)) return "norm-" + norm->view;
  if (const std::optional<LossKind> loss = loss_kind_of(problem))
    return loss->per_row ? "loss-rows" : "loss-elements";
  if (scan_kind_of(problem)) return "scan";
  if (const std::optional<MatmulKind> matmul = matmul_kind_of(problem))
    return matmul->triangle ? "matmul-triangle" : "matmul-" + matmul->shape;
  if (is_attention_problem(problem)) return "attention";
  if (const std::optional<PoolWindow> window = pool_window_of(problem))
    return fmt::format("pool-{}d-stride{}", window->dims, window->stride == 1 ? "1" : "n");
  return "";
}

const StrategySet& generated_strategies(const std::string& problem) {
  const std::optional<Family> family = generated_family(problem);
  if (!family)
    throw UsageError(fmt::format("{}: no kernel generator for this problem yet", problem));
  if (blas2_kind_of(problem)) return blas2_generated_strategies(problem);
  if (*family == Family::kMap) return map_generated_strategies();
  if (*family == Family::kScan) return scan_generated_strategies();
  if (*family == Family::kPooling) return pool_generated_strategies(problem);
  if (*family == Family::kMatmul) return matmul_generated_strategies(problem);
  if (*family == Family::kAttention) return attention_generated_strategies();
  if (norm_kind_of(problem)) return norm_generated_strategies(problem);
  if (loss_kind_of(problem)) return loss_generated_strategies(problem);
  return whole_sum_element(problem) ? sum_generated_strategies() : reduce_generated_strategies();
}

std::string generate_candidate(const Genome& genome, const std::string& problem) {
  const std::optional<Family> family = generated_family(problem);
  if (!family)
    throw UsageError(fmt::format("{}: no kernel generator for this problem yet", problem));
  if (blas2_kind_of(problem)) return generate_blas2_candidate(genome, problem);
  if (*family == Family::kMap) return generate_map_candidate(genome, problem);
  if (*family == Family::kScan) return generate_scan_candidate(genome, problem);
  if (*family == Family::kPooling) return generate_pool_candidate(genome, problem);
  if (*family == Family::kMatmul) return generate_matmul_candidate(genome, problem);
  if (*family == Family::kAttention) return generate_attention_candidate(genome, problem);
  if (norm_kind_of(problem)) return generate_norm_candidate(genome, problem);
  if (loss_kind_of(problem)) return generate_loss_candidate(genome, problem);
  return whole_sum_element(problem) ? generate_sum_candidate(genome, problem)
                                    : generate_reduce_candidate(genome, problem);
}

namespace {

std::string stem_of(const CandidateEvaluatorOptions& o, const Genome& genome) {
  return fmt::format("{}/{:016x}", o.folder, genome.hash());
}

// The judge's own compile settings (`kiln bench candidate` defaults), so its build is reused.
constexpr const char* kArch = "sm_90a";
constexpr int kCompileTimeout = 300;

// `kiln bench candidate` on `sources` (each one's verdict beside it as X.json).
std::string judge_command(const CandidateEvaluatorOptions& o,
                          const std::vector<std::string>& sources) {
  std::string command =
      fmt::format("'{}' bench candidate --problem {} --sizes {} -g 1", o.kiln, o.problem, o.size);
  for (const std::string& source : sources) command += fmt::format(" --source '{}'", source);
  command += fmt::format(
      " --build-dir '{}' --reuse-builds -w {} -n {} --trials {} --timeout {} --time-limit {} "
      "--json-per-source"
      " --skip-reference-timing --timing {}",
      o.folder, o.warmup, o.iterations, o.trials, o.timeout_seconds,
      4 * o.timeout_seconds * std::max(1, static_cast<int>(sources.size())), o.timing);
  return command;
}

// The verdict the judge wrote to `json_path`; `output` and `code` explain a missing one.
Evaluation read_verdict(const std::string& json_path, const std::string& output, int code) {
  Evaluation e;
  std::ifstream json(json_path);
  if (!json) {
    // No JSON: the source did not compile, or the judgement died before writing it.
    e.failure = fmt::format("no result (exit {}): {}", code, error_excerpt(output));
    return e;
  }
  // A report cut short (a rank killed while writing it) is no result, not an exception.
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rows")) {
    e.failure = fmt::format("unreadable result (exit {}): {}", code, json_path);
    return e;
  }
  const auto verdict = j.find("verdict");
  const bool has_verdict = verdict != j.end() && verdict->is_object();
  for (const auto& row : j.at("rows")) {
    if (!row.value("skipped", std::string()).empty()) continue;
    e.correct = row.at("correct").get<bool>();
    e.us = row.at("solution_us").at("median").get<double>();
    e.roof_us = row.at("roof_us").get<double>();
    e.binding = row.at("binding").get<std::string>();
    e.failure = row.value("failure", std::string());
    // Correct rows, then a rank crashed or ran past its time: the judge did not accept it.
    if (has_verdict && e.correct && !verdict->value("accepted", true)) {
      e.correct = false;
      e.failure = verdict->value("reason", std::string("not accepted"));
    }
    return e;
  }
  // No judged row: the judge's verdict says why (did not compile, crashed, ran past its time).
  if (has_verdict) {
    const std::string log = verdict->value("build_log", std::string());
    // No build log: a judge that ended without a report quotes its own output instead.
    const std::string why = !log.empty() ? error_excerpt(log) : last_error_line(output);
    e.failure = fmt::format("{} (exit {}){}{}", verdict->value("reason", std::string("rejected")),
                            verdict->value("exit_code", code), why.empty() ? "" : ": ", why);
  } else {
    e.failure = fmt::format("no judged row (exit {})", code);
  }
  return e;
}

// Adds a verdict's judge phases (its rows' phase_seconds) to `total`; a verdict without them
// (an older judge) adds nothing.
void add_phase_seconds(const std::string& json_path, std::map<std::string, double>& total) {
  std::ifstream json(json_path);
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.contains("rows")) return;
  for (const auto& row : j.at("rows")) {
    if (!row.contains("phase_seconds") || !row.at("phase_seconds").is_object()) continue;
    for (const auto& [phase, seconds] : row.at("phase_seconds").items())
      if (seconds.is_number()) total[phase] += seconds.get<double>();
  }
}

// The file whose lock is a GPU's turn to judge: KILN_JUDGE_LOCK, else one per GPU in /tmp (the
// judge runs on the first visible device); empty when KILN_JUDGE_LOCK is "none".
std::string judge_lock_path() {
  if (const char* chosen = std::getenv("KILN_JUDGE_LOCK"); chosen != nullptr && *chosen)
    return std::string(chosen) == "none" ? std::string() : std::string(chosen);
  std::string device = "0";
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && *visible)
    device = std::string(visible).substr(0, std::string(visible).find(','));
  for (char& c : device)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  return "/tmp/kiln-judge-gpu-" + device + ".lock";
}

// One judgement on a GPU at a time: in this process (`kiln evolve set --parallel-problems`
// searches several problems at once, so that one compiles while another is judged), in the order
// asked (core/fifo_turn.hpp), and across processes (searches run side by side, e.g. guided and
// random), because two judgements timing kernels on one GPU would disturb each other's times.
class GpuTurn {
 public:
  GpuTurn() : asked_(std::chrono::steady_clock::now()), local_(turns()) {
    if (const std::string path = judge_lock_path(); !path.empty()) file_.emplace(path);
    waited_seconds_ = core::seconds_since(asked_);
  }
  // How long the turn took to come (the other searches' judgements meanwhile).
  double waited_seconds() const { return waited_seconds_; }

 private:
  static core::FifoTurns& turns() {
    static core::FifoTurns gpu;
    return gpu;
  }
  std::chrono::steady_clock::time_point asked_;
  core::FifoTurns::InTurn local_;
  std::optional<core::ExclusiveFileLock> file_;
  double waited_seconds_ = 0.0;
};

// The candidates of a request after the first one without a verdict (the one the server was
// judging when it ended), those without a verdict of their own.
std::vector<bench::ServedCandidate> unjudged_after_first(
    const std::vector<bench::ServedCandidate>& request) {
  std::vector<bench::ServedCandidate> rest;
  bool culprit_found = false;
  for (const bench::ServedCandidate& c : request) {
    if (std::filesystem::exists(c.json_path)) continue;
    if (culprit_found) rest.push_back(c);
    culprit_found = true;
  }
  return rest;
}

}  // namespace

std::function<void(const std::vector<Genome>&)> candidate_preparer(
    const CandidateEvaluatorOptions& o, int threads) {
  // The judge server (kept up between batches), made at the first batch that needs it.
  std::shared_ptr<JudgeServer> server;
  return [o, threads, server](const std::vector<Genome>& batch) mutable {
    std::filesystem::create_directories(o.folder);
    // One of each genome (two threads must not write and compile the same file); only the ones
    // the generator has code for go to the batch judgement (the evaluator reports the others).
    std::vector<Genome> unique;
    std::set<std::uint64_t> seen;
    for (const Genome& g : batch)
      if (seen.insert(g.hash()).second) unique.push_back(g);
    std::vector<char> generated(unique.size(), 0);
    std::vector<std::string> libraries(unique.size());
    std::vector<std::string> compile_failures(unique.size());
    std::atomic<std::size_t> next{0};
    // The judge server starts at the batch's first library built, while the rest compile (its
    // process, CUDA context and communicator: 0.4-1 s that the first request would otherwise
    // spend holding the GPU turn); a batch with nothing built starts none.
    if (o.batch && o.serve && !server)
      server = std::make_shared<JudgeServer>(
          judge_command(o, {}) + (o.release_setup ? " --serve-release-setup" : ""), o.folder);
    // The server is started by this thread, not by a compiling one: the server dies with the
    // thread that forked it (PR_SET_PDEATHSIG), and the compiling threads end before the batch is
    // judged (a server started from one was killed at its end, and judge() started another on the
    // GPU's turn). The compiling threads say when the first library is built, or that they are
    // done.
    std::mutex built_mutex;
    std::condition_variable built_changed;
    bool any_built = false;
    int threads_done = 0;
    const auto work = [&] {
      for (std::size_t i = next++; i < unique.size(); i = next++) {
        const std::string stem = stem_of(o, unique[i]);
        try {
          const std::string source = generate_candidate(unique[i], o.problem);
          std::ofstream(stem + ".cu") << source;
          generated[i] = 1;
          const HeavyBuildSlots::Held slot(HeavyBuildSlots::process(),
                                           bench::includes_cutlass(source));
          libraries[i] = bench::compile_candidate(stem + ".cu", o.folder, kArch, kCompileTimeout,
                                                  o.build_cache, o.serve && o.split_build)
                             .library;
          if (server && !libraries[i].empty()) {
            {
              const std::lock_guard lock(built_mutex);
              any_built = true;
            }
            built_changed.notify_all();
          }
        } catch (const bench::CandidateBuildError& e) {
          // nvcc rejected it: the verdict the judge would write (read_verdict's wording).
          compile_failures[i] =
              fmt::format("did not compile (exit -1): {}", error_excerpt(e.what()));
        } catch (const UsageError& e) {
          // Built from nothing the judge could build either (e.g. CUTLASS's headers missing).
          if (generated[i])
            compile_failures[i] = fmt::format("no result (exit 2): error: {}", e.what());
        } catch (const std::exception&) {
          // A genome the generator refuses: the evaluator reports it.
        }
      }
    };
    const auto compile_start = std::chrono::steady_clock::now();
    const int thread_count = std::max(1, threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < thread_count; ++t)
      pool.emplace_back([&] {
        work();
        {
          const std::lock_guard lock(built_mutex);
          ++threads_done;
        }
        built_changed.notify_all();
      });
    if (server) {
      bool built = false;
      {
        std::unique_lock lock(built_mutex);
        built_changed.wait(lock, [&] { return any_built || threads_done == thread_count; });
        built = any_built;
      }
      // A start that fails here (fork, the server's folder) must not unwind past the joinable
      // compiling threads: judge() starts one again and reports what fails then.
      if (built) {
        try {
          server->start_ahead();
        } catch (const std::exception& e) {
          fmt::print(stderr, "# judge server not started ahead: {}\n", e.what());
        }
      }
    }
    for (std::thread& t : pool) t.join();
    if (!o.batch) return;
    {
      const std::lock_guard lock(o.batch->mutex);
      o.batch->compile_seconds += core::seconds_since(compile_start);
      for (std::size_t i = 0; i < unique.size(); ++i)
        if (!compile_failures[i].empty())
          o.batch->compile_failures[unique[i].hash()] = compile_failures[i];
    }
    // The batch judged in one launch; only verdicts written by this launch count.
    std::vector<std::string> sources;
    std::vector<Genome> judged;
    for (std::size_t i = 0; i < unique.size(); ++i) {
      if (!generated[i] || !compile_failures[i].empty()) continue;
      const std::string stem = stem_of(o, unique[i]);
      std::filesystem::remove(stem + ".json");  // only this launch's verdicts count
      sources.push_back(stem + ".cu");
      judged.push_back(unique[i]);
    }
    if (sources.empty()) return;
    double judge_seconds = 0.0, wait_seconds = 0.0;
    if (o.serve) {
      // The compiled ones to the server; one nvcc rejected is judged alone afterwards (its
      // failure then comes from the judge).
      std::vector<bench::ServedCandidate> served;
      for (std::size_t i = 0; i < unique.size(); ++i) {
        if (!generated[i] || libraries[i].empty()) continue;
        const std::string stem = stem_of(o, unique[i]);
        served.push_back(
            {std::filesystem::path(stem).filename().string(), libraries[i], stem + ".json"});
      }
      if (!served.empty()) {
        const GpuTurn turn;
        wait_seconds = turn.waited_seconds();
        const auto judge_start = std::chrono::steady_clock::now();
        // A first request also starts the process, its CUDA context and the problem's set-up.
        // When the server ends during the batch (a candidate crashed it or ran past its limit),
        // the verdicts written stand, the first candidate without one (the one it was judging)
        // is judged alone by the evaluator, and the rest go to a new server at once: judged
        // alone, each would pay a process start and the problem's set-up on the GPU's turn (five
        // such cost 114 s of one set run's 480, H200, 2026-11-29).
        std::vector<bench::ServedCandidate> request = served;
        for (int round = 0; !request.empty(); ++round) {
          const bool answered = server->judge(
              request, 120.0 + 4.0 * o.timeout_seconds * static_cast<double>(request.size()));
          if (answered) break;
          std::ifstream log(server->current_dir() + "/server.log");
          const std::string text((std::istreambuf_iterator<char>(log)),
                                 std::istreambuf_iterator<char>());
          fmt::print(stderr, "# judge server ended during a batch of {} (log: {}/server.log): {}\n",
                     request.size(), server->current_dir(), last_error_line(text));
          if (round == 2) break;  // a batch that keeps breaking servers: the rest alone
          request = unjudged_after_first(request);
        }
        judge_seconds = core::seconds_since(judge_start);
      }
    } else {
      std::string output;
      const std::string command = judge_command(o, sources);
      {
        const GpuTurn turn;
        wait_seconds = turn.waited_seconds();
        const auto judge_start = std::chrono::steady_clock::now();
        (void)core::run_command(command, output);
        judge_seconds = core::seconds_since(judge_start);
      }
      std::ofstream(fmt::format("{}/batch-{:016x}.log", o.folder, judged.front().hash()))
          << command << "\n"
          << output;
    }
    const std::lock_guard lock(o.batch->mutex);
    o.batch->judge_seconds += judge_seconds;
    o.batch->gpu_wait_seconds += wait_seconds;
    for (const Genome& g : judged) {
      if (!std::filesystem::exists(stem_of(o, g) + ".json")) continue;
      o.batch->judged.insert(g.hash());
      add_phase_seconds(stem_of(o, g) + ".json", o.batch->judge_phase_seconds);
    }
  };
}

namespace {

// --ncu: Nsight Compute's counters of the candidate at `stem`.cu, its own kernels only, judged
// once more in one process (`kiln bench candidate --in-process`: ncu cannot follow the judge's
// forked rank) with the build made beforehand, outside ncu, into a folder of its own (the
// search's libraries may be split builds, which a whole nvcc build of the same stem would
// overwrite). Everything ncu printed goes to `stem`.ncu.log.
constexpr int kProfileSeconds = 600;

KernelCounters profile_counters(const CandidateEvaluatorOptions& o, const std::string& stem) {
  KernelCounters c;
  std::ofstream log(stem + ".ncu.log");
  std::stringstream source;
  source << std::ifstream(stem + ".cu").rdbuf();
  const std::string filter = candidate_kernel_filter(candidate_kernel_names(source.str()));
  if (filter.empty()) {
    c.error = "no __global__ kernel named in the source";
    log << c.error << "\n";
    return c;
  }
  const std::string build = o.folder + "/ncu-build";
  std::filesystem::create_directories(build);
  std::string judge = fmt::format(
      "{} bench candidate --problem {} --sizes {} --source {} --reuse-builds --build-dir {}",
      core::shell_quoted(o.kiln), o.problem, o.size, core::shell_quoted(stem + ".cu"),
      core::shell_quoted(build));
  if (!o.build_cache.empty())  // CUTLASS units built once, not again for the profile
    judge += " --build-cache " + core::shell_quoted(o.build_cache);
  std::string output;
  int code = core::run_command(judge + " --compile-only", output);
  log << judge << " --compile-only\n" << output;
  if (code != 0) {
    c.error = fmt::format("the profiling build failed (exit {})", code);
    return c;
  }
  // Clocks left alone (--clock-control none), as the shared machines require; kiln alone
  // (application-only: nothing it starts); a few launches of the candidate's kernels (a call may
  // launch several: split, GEMM, reduction of the slices). Each replayed launch saves and
  // restores the judge's memory (GBs at KernelBench's size), so the judge's waits get 600 s.
  const std::string command = fmt::format(
      "timeout {} ncu --clock-control none --target-processes application-only --csv --metrics "
      "{} --kernel-name-base demangled --kernel-name {} --launch-count 8 {} -w 1 -n 2 --trials 1 "
      "--timing screen --skip-reference-timing --timeout {} --in-process",
      kProfileSeconds + 120, counter_metrics(), core::shell_quoted(filter), judge, kProfileSeconds);
  output.clear();
  {
    const GpuTurn turn;  // counters read while another judgement runs would mix the two
    code = core::run_command(command, output);
  }
  log << command << "\n" << output;
  c = counters_from_ncu(core::parse_ncu_csv(output));
  if (!c.measured()) {
    const std::string refused = core::ncu_error_line(output);
    c.error = !refused.empty() ? refused : fmt::format("ncu exit {}: {}", code, c.error);
  }
  return c;
}

}  // namespace

Evaluator candidate_evaluator(const CandidateEvaluatorOptions& o) {
  if (!generated_family(o.problem))
    throw UsageError(fmt::format("--problem {}: no kernel generator for it yet ({})", o.problem,
                                 generated_problems_text()));
  std::filesystem::create_directories(o.folder);
  Evaluator judged = [o](const Genome& genome) {
    const std::string stem = stem_of(o, genome);
    try {
      const std::string source = generate_candidate(genome, o.problem);
      std::ofstream(stem + ".cu") << source;
    } catch (const UsageError& refused) {
      // A genome the generator has no code for: its failure (the search revises it), not the run's.
      Evaluation e;
      e.failure = std::string("not generated: ") + refused.what();
      return e;
    }
    if (o.batch) {  // judged in its batch's launch: that verdict, once
      const std::lock_guard lock(o.batch->mutex);
      if (o.batch->judged.erase(genome.hash()) == 1) {
        // The batch's verdict, unless the batch judged nothing: then alone, below.
        Evaluation e = read_verdict(stem + ".json", "", 0);
        if (e.correct || !judged_nothing(e.failure)) return e;
      }
      if (const auto failed = o.batch->compile_failures.find(genome.hash());
          failed != o.batch->compile_failures.end()) {
        Evaluation e;
        e.failure = failed->second;
        o.batch->compile_failures.erase(failed);
        return e;
      }
    }
    const std::string command = judge_command(o, {stem + ".cu"});
    std::ofstream log(stem + ".log");
    Evaluation e;
    // A judge that ended without judging anything (no report: an error in a rank before or
    // outside the candidate's calls) is asked once more after a pause. In one stretch of a set
    // run 42 judgements ended so, confirmations of good kernels among them (H200, 2026-11-29):
    // a passing shortage costs no genome its verdict; a candidate that breaks the judge breaks it
    // again.
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(3));
      std::filesystem::remove(stem + ".json");
      std::string output;
      int code = 0;
      double waited = 0.0, judged = 0.0;
      {
        const GpuTurn turn;
        waited = turn.waited_seconds();
        const auto judge_start = std::chrono::steady_clock::now();
        code = core::run_command(command, output);
        judged = core::seconds_since(judge_start);
      }
      if (o.batch) {
        const std::lock_guard lock(o.batch->mutex);
        o.batch->gpu_wait_seconds += waited;
        o.batch->alone_judge_seconds += judged;
        ++o.batch->alone_judgements;
      }
      log << command << "\n" << output;
      e = read_verdict(stem + ".json", output, code);
      if (e.correct || !judged_nothing(e.failure)) break;
      log << "# judged nothing" << (attempt == 0 ? ": once more after 3 s\n" : "\n");
    }
    return e;
  };
  if (!o.ncu) return judged;
  // Profiled: each kernel that beats every one profiled before it (a new best of the run), so a
  // search of 100 evaluations profiles a handful, the parents most often chosen among them.
  struct Profiled {
    std::mutex mutex;
    double best = 0.0;
  };
  auto profiled = std::make_shared<Profiled>();
  profiled->best = o.ncu_above;
  return [o, judged, profiled](const Genome& genome) {
    Evaluation e = judged(genome);
    if (!e.correct) return e;
    {
      const std::lock_guard lock(profiled->mutex);
      if (e.fitness() <= profiled->best) return e;
      profiled->best = e.fitness();
    }
    e.counters = profile_counters(o, stem_of(o, genome));
    return e;
  };
}

}  // namespace kiln::evolve
