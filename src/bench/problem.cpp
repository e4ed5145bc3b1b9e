// Problem registry helpers (see problem.hpp).
#include "bench/problem.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include "core/error.hpp"

namespace kiln::bench {

std::string category_name(Category category) {
  switch (category) {
    case Category::kCollective:
      return "collective";
    case Category::kTensorParallel:
      return "tensor-parallel";
    case Category::kSequenceParallel:
      return "sequence-parallel";
    case Category::kContextParallel:
      return "context-parallel";
    case Category::kDataParallel:
      return "data-parallel";
    case Category::kExpertParallel:
      return "expert-parallel";
    case Category::kFsdpZero:
      return "fsdp-zero";
    case Category::kVocabParallel:
      return "vocab-parallel";
    case Category::kGraph:
      return "graph";
    case Category::kScientific:
      return "scientific";
    case Category::kSingleGpu:
      return "single-gpu";
    case Category::kOther:
      return "other";
  }
  return "?";
}

CandidateBuffers one_rank_buffers(std::initializer_list<BufferSpan> inputs, void* output,
                                  unsigned long long output_bytes) {
  CandidateBuffers b;
  for (const BufferSpan& input : inputs) {
    b.inputs.push_back(input.data);
    b.input_bytes.push_back(input.bytes);
  }
  b.peer_inputs = b.inputs;
  b.outputs = {output};
  b.output_bytes = {output_bytes};
  return b;
}

CandidateBuffers ProblemRun::candidate_buffers() {
  throw UsageError("this problem takes no outside candidates yet");
}

std::int64_t ProblemSize::dim(const std::string& key) const {
  const auto it = dims.find(key);
  if (it == dims.end()) throw Error(fmt::format("size {} has no dimension '{}'", name, key));
  return it->second;
}

std::vector<const Problem*> select_problems(const ProblemList& registry,
                                            const std::vector<std::string>& patterns,
                                            const std::string& argument) {
  std::vector<const Problem*> selected;
  for (const auto& problem : registry) {
    bool take = patterns.empty();
    for (const std::string& p : patterns)
      take = take || fnmatch(p.c_str(), problem->name().c_str(), 0) == 0;
    if (take) selected.push_back(problem.get());
  }
  for (const std::string& p : patterns) {
    bool matched = false;
    for (const auto& problem : registry)
      matched = matched || fnmatch(p.c_str(), problem->name().c_str(), 0) == 0;
    if (!matched) {
      std::string names;
      for (const auto& problem : registry) names += (names.empty() ? "" : ", ") + problem->name();
      throw UsageError(fmt::format("{} {}: matches no problem; known: {}", argument, p, names));
    }
  }
  return selected;
}

}  // namespace kiln::bench
