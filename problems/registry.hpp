// The factories of the problems under problems/ (one per file), listed by registry.cpp.
#pragma once

#include <memory>

#include "bench/problem.hpp"

namespace kiln::problems {

// Every problem kiln ships, in table order.
const bench::ProblemList& problem_registry();

std::unique_ptr<bench::Problem> make_allgather();
std::unique_ptr<bench::Problem> make_alltoall();
std::unique_ptr<bench::Problem> make_allreduce();
std::unique_ptr<bench::Problem> make_reducescatter();
std::unique_ptr<bench::Problem> make_broadcast();
std::unique_ptr<bench::Problem> make_scatter();
std::unique_ptr<bench::Problem> make_dp_bucketed_allreduce();
std::unique_ptr<bench::Problem> make_vocab_parallel_ce();
std::unique_ptr<bench::Problem> make_tp_gemm_allreduce();
std::unique_ptr<bench::Problem> make_tp_gemm_reducescatter();
std::unique_ptr<bench::Problem> make_tp_allgather_gemm();
std::unique_ptr<bench::Problem> make_ulysses_qkv_a2a();
std::unique_ptr<bench::Problem> make_moe_dispatch();
std::unique_ptr<bench::Problem> make_moe_combine();
// One GPU: the sum of an int32 array (the reduction study's problem; issue 20's ladder test).
std::unique_ptr<bench::Problem> make_reduce_sum_int32();
// Single-GPU problems after KernelBench level 1 (kb1-*), a family per call.
void add_kb1_matmul(bench::ProblemList& list);
void add_kb1_elementwise(bench::ProblemList& list);
void add_kb1_reductions(bench::ProblemList& list);
void add_kb1_norms(bench::ProblemList& list);
void add_kb1_attention(bench::ProblemList& list);
void add_kb1_losses(bench::ProblemList& list);
void add_kb1_cumulative(bench::ProblemList& list);
void add_kb1_pooling(bench::ProblemList& list);

}  // namespace kiln::problems
