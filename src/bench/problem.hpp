// A benchmark problem (ParallelKernelBench-style): a multi-GPU task with size presets, per-rank
// inputs made from a seed, an unoptimized reference (NCCL + cuBLAS + plain kernels), one or more
// solutions, a correctness comparison and a roofline cost model. Problems live one per file under
// problems/ and are listed in problems/registry.cpp; the harness (suite.hpp) runs them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "roofline/roofline.hpp"

namespace kiln::comm {
class Communicator;
}

namespace kiln::bench {

enum class Category {
  kCollective,
  kTensorParallel,
  kSequenceParallel,
  kContextParallel,
  kDataParallel,
  kExpertParallel,
  kFsdpZero,
  kVocabParallel,
  kGraph,
  kScientific,
  kSingleGpu,  // KernelBench level 1 equivalents (kb1-*)
  kOther
};
std::string category_name(Category category);  // "collective", "tensor-parallel", ...

// A size preset: a name for tables ("1M") and the problem's dimensions.
struct ProblemSize {
  std::string name;
  std::map<std::string, std::int64_t> dims;
  std::int64_t dim(const std::string& key) const;  // throws kiln::Error when absent
};

// What a problem sees on one rank.
struct RankContext {
  comm::Communicator& comm;
  cudaStream_t stream;
  core::DType dtype;
};

// What an outside candidate (include/kiln/candidate.h) is given: this rank's inputs, every
// rank's inputs through peer memory ([rank * inputs + i]), and the solution's outputs.
struct CandidateBuffers {
  std::vector<const void*> inputs;
  std::vector<unsigned long long> input_bytes;
  std::vector<const void*> peer_inputs;
  std::vector<void*> outputs;
  std::vector<unsigned long long> output_bytes;
};

// The buffers of a one-rank problem: its inputs (each as {pointer, bytes}; on one rank they are
// also the peer inputs) and its one output.
struct BufferSpan {
  const void* data;
  unsigned long long bytes;
};
CandidateBuffers one_rank_buffers(std::initializer_list<BufferSpan> inputs, void* output,
                                  unsigned long long output_bytes);

// One problem at one size on one rank. Owns its inputs and both outputs.
class ProblemRun {
 public:
  virtual ~ProblemRun() = default;
  // This rank's inputs for a trial; `seed` is the trial's (the rank is mixed in by the problem,
  // so every rank differs and any rank's inputs can be rebuilt on the host).
  virtual void make_inputs(std::uint64_t seed) = 0;
  virtual void poison_outputs() = 0;
  // Enqueue on the context's stream.
  virtual void reference() = 0;
  virtual void solution(int index) = 0;
  // After reference() completed: "" when the reference's output matches an independent host
  // computation from the trial's seed, else why not (the reference's own correctness check).
  virtual std::string check_reference() = 0;
  // After solution() and reference() completed: "" when the solution's output matches the
  // reference's within the problem's tolerance, else the first mismatch.
  virtual std::string compare() = 0;
  // The buffers an outside candidate works on (its output is the solution's, compared the same
  // way). Throws kiln::UsageError for problems that take no candidates yet.
  virtual CandidateBuffers candidate_buffers();
  // Where reference() writes its output (what compare() reads), for a judge that keeps a copy per
  // input seed instead of running a slow reference again: a search's screened judgements all use
  // the same seeds, and a KernelBench matmul's double-accumulating reference took ~40 ms of each
  // ~145 ms judgement, twice (H200, 2026-11-29). Empty (the default): never kept.
  struct OutputSpan {
    void* data = nullptr;
    unsigned long long bytes = 0;
  };
  virtual std::vector<OutputSpan> reference_outputs() { return {}; }
  // What a solution runs where it chose at run time (a tuned plan and where it came from), for
  // the row's JSON and note; "" when there is nothing to say.
  virtual std::string describe_solution(int /*index*/) const { return ""; }
};

class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::string name() const = 0;
  virtual Category category() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<ProblemSize> sizes() const = 0;
  virtual std::vector<std::string> solutions() const = 0;
  // The phases of the problem per GPU (FLOPs, HBM bytes, bus bytes) at `size`.
  virtual roofline::CostModel cost(const ProblemSize& size, core::DType dtype, int world) const = 0;
  // The time floor's cost (judge_guards.hpp): only what the result provably needs, at the
  // precision the fastest legitimate implementation could use. A solution measured below the
  // floor is rejected as impossible. None (the default): the problem has no floor check.
  virtual std::optional<roofline::CostModel> floor_cost(const ProblemSize&, core::DType,
                                                        int /*world*/) const {
    return std::nullopt;
  }
  // A problem defined at one precision (KernelBench's fp32 problems) ignores the suite's -d.
  virtual std::optional<core::DType> fixed_dtype() const { return std::nullopt; }
  // Throws kiln::UsageError when the problem cannot run on this world (e.g. too many ranks).
  virtual std::unique_ptr<ProblemRun> start(const ProblemSize& size,
                                            RankContext& context) const = 0;
};

// A set of problems in table order (kiln's own: problems::problem_registry()). The harness is
// handed one; it never reaches for a particular set itself.
using ProblemList = std::vector<std::unique_ptr<Problem>>;

// Problems of `registry` whose names match any of the shell-style globs ("*", "all*"); all when
// empty. Throws kiln::UsageError naming the pattern that matches none.
std::vector<const Problem*> select_problems(const ProblemList& registry,
                                            const std::vector<std::string>& patterns,
                                            const std::string& argument = "--problems");

}  // namespace kiln::bench
