// The problem registry: every problem kiln ships, in table order. A new problem adds its file
// under problems/, its factory to registry.hpp and one line here.
#include "problems/registry.hpp"

namespace kiln::bench {

const std::vector<std::unique_ptr<Problem>>& problem_registry() {
  static const std::vector<std::unique_ptr<Problem>> registry = [] {
    std::vector<std::unique_ptr<Problem>> all;
    all.push_back(problems::make_allreduce());
    all.push_back(problems::make_reducescatter());
    all.push_back(problems::make_allgather());
    all.push_back(problems::make_alltoall());
    all.push_back(problems::make_broadcast());
    all.push_back(problems::make_scatter());
    all.push_back(problems::make_dp_bucketed_allreduce());
    all.push_back(problems::make_vocab_parallel_ce());
    all.push_back(problems::make_tp_gemm_allreduce());
    all.push_back(problems::make_tp_gemm_reducescatter());
    all.push_back(problems::make_tp_allgather_gemm());
    all.push_back(problems::make_ulysses_qkv_a2a());
    all.push_back(problems::make_moe_dispatch());
    all.push_back(problems::make_moe_combine());
    return all;
  }();
  return registry;
}

}  // namespace kiln::bench
