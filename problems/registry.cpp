// The problem registry: every problem kiln ships, in table order. A new problem adds its file
// under problems/, its factory to registry.hpp and one line here.
#include "problems/registry.hpp"

namespace kiln::problems {

const bench::ProblemList& problem_registry() {
  static const bench::ProblemList registry = [] {
    bench::ProblemList all;
    all.push_back(make_allreduce());
    all.push_back(make_reducescatter());
    all.push_back(make_allgather());
    all.push_back(make_alltoall());
    all.push_back(make_broadcast());
    all.push_back(make_scatter());
    all.push_back(make_dp_bucketed_allreduce());
    all.push_back(make_vocab_parallel_ce());
    all.push_back(make_tp_gemm_allreduce());
    all.push_back(make_tp_gemm_reducescatter());
    all.push_back(make_tp_allgather_gemm());
    all.push_back(make_ulysses_qkv_a2a());
    all.push_back(make_moe_dispatch());
    all.push_back(make_moe_combine());
    all.push_back(make_reduce_sum_int32());
    add_kb1_matmul(all);
    add_kb1_elementwise(all);
    add_kb1_reductions(all);
    add_kb1_norms(all);
    add_kb1_attention(all);
    add_kb1_pooling(all);
    add_kb1_cumulative(all);
    add_kb1_losses(all);
    return all;
  }();
  return registry;
}

}  // namespace kiln::problems
