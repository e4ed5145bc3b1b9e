// The judge as the evolution engine's evaluator (issue 20): a genome's generated source is
// written to the run's folder and judged by `kiln bench candidate` in a child process (kiln's
// own binary), so a kernel that crashes or hangs costs only its evaluation; the child's JSON
// gives correctness, the median time, T_roof and the binding resource.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "evolve/search.hpp"

namespace kiln::evolve {

// Genomes whose verdicts a batch judgement wrote (their hashes), shared by the preparer that
// judges a batch in one launch and the evaluator that then reads each verdict instead of judging.
// Also where the engine's time went (wall seconds): compiling batches, judging them (the child
// process's whole span), and the judge's own phases summed over candidates (SuiteRow::
// phase_seconds; the rest of a launch is process start, CUDA context and loading libraries).
struct BatchVerdicts {
  std::mutex mutex;
  std::set<std::uint64_t> judged;
  // Genomes whose source the preparer could not build, with the failure the judge would report:
  // the evaluator takes it instead of launching a judge that would only fail to build it again
  // (each such launch cost 2-4 s of the GPU's turn, and a CUTLASS build up to its time limit).
  std::map<std::uint64_t, std::string> compile_failures;
  double compile_seconds = 0.0;
  double judge_seconds = 0.0;
  // Waiting for the GPU's turn (other searches' judgements: `kiln evolve set` runs several), and
  // the judgements made alone, outside a batch (a genome its batch did not judge through, a retry
  // of one that judged nothing), each a process of its own.
  double gpu_wait_seconds = 0.0;
  double alone_judge_seconds = 0.0;
  int alone_judgements = 0;
  std::map<std::string, double> judge_phase_seconds;
};

struct CandidateEvaluatorOptions {
  std::string kiln;     // the kiln binary
  std::string problem;  // e.g. "kb1-19-relu"
  std::string size = "small";
  std::string folder;  // where sources, libraries and JSON go
  // Libraries by code and flags, shared across runs (bench::compile_candidate's shared_cache);
  // empty: none.
  std::string build_cache;
  int warmup = 5, iterations = 20, trials = 3;
  int timeout_seconds = 60;
  // The judge's --timing: "guarded" (the verdict) or "screen" (a search's cheap ranking of its
  // own kernels; bench/screened_timing.hpp).
  std::string timing = "guarded";
  // Set: the preparer also judges each batch in one `kiln bench candidate` launch (several
  // --source), and the evaluator takes those verdicts; a genome the batch did not judge through
  // (it stopped at a crash) is judged alone as before. Null: every genome judged alone.
  std::shared_ptr<BatchVerdicts> batch;
  // With `batch`: the batches go to one judge process kept up between them (evolve/
  // judge_server.hpp, `kiln bench candidate --serve`) instead of a launch each.
  bool serve = false;
  // The server frees the problem's set-up after a batch that leaves under a third of the GPU's
  // memory free (several servers up at once), else keeps it for the next.
  bool release_setup = false;
  // With `serve`: the preparer builds sources marked for it split, device code by NVRTC and host
  // code by the host compiler (bench/split_build.hpp, 1.6-2.4x less compile time in a search), and
  // the server judges those libraries. A verdict (guarded confirmation) builds whole with nvcc, as
  // the exported kernel is built.
  bool split_build = false;
  // --ncu: each correct kernel whose U beats every one profiled so far (and `ncu_above`, a
  // resumed log's best) is profiled by Nsight Compute in the GPU's turn, its counters attached to
  // the evaluation (evolve/kernel_counters.hpp). A profile that fails leaves the evaluation as it
  // was, with the reason in its counters.
  bool ncu = false;
  double ncu_above = 0.0;
};

// Throws kiln::UsageError when the problem's family has no generator yet.
Evaluator candidate_evaluator(const CandidateEvaluatorOptions& options);
// SearchOptions::prepare for that evaluator: writes a batch's sources and compiles them on
// `threads` threads, so that the judge finds them built (compile_candidate reuses a library
// built from the same source), then (options.batch set) judges them in one launch. Failures are
// left for the judge to report.
std::function<void(const std::vector<Genome>&)> candidate_preparer(
    const CandidateEvaluatorOptions& options, int threads);

// The source a genome becomes for `problem` (by the problem's family's generator).
std::string generate_candidate(const Genome& genome, const std::string& problem);
// The problem's kind within its family, for the strategy pool's category (PoolKey::category is
// "<bench category>/<kind>"): problems of a kind have the same data layout and work shape, so one's
// best strategies are the next one's best seeds (sum and min over a middle dimension, softmax and
// log-softmax over rows), where a family mixes shapes whose winners differ (a row norm's cluster
// split is a poor seed for a middle-dimension sum). Empty for a problem without a generator.
std::string problem_kind(const std::string& problem);
// The problems with a generator, in words (for the "no generator" usage error).
std::string generated_problems_text();
// The family of a problem kiln can generate kernels for; none otherwise.
std::optional<Family> generated_family(const std::string& problem);
// The strategies the problem's generator implements (the search's allowed set).
const StrategySet& generated_strategies(const std::string& problem);

}  // namespace kiln::evolve
