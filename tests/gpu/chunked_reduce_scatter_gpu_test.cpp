// GEMM + ReduceScatter by destination chunks (overlap::ChunkedReduceScatter, async-TP's algorithm
// from kiln's parts) against cuBLAS on the whole product + NCCL's ReduceScatter, per rank: fresh
// inputs on every call (a staged chunk or a peer region left from an earlier call shows), poisoned
// outputs, both weight layouts, chunks that are not tile multiples, three calls enqueued back to
// back with one host wait, and the same inputs twice giving the same bits.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/fill.hpp"
#include "core/stream.hpp"
#include "device_compare.hpp"
#include "gpu_availability.hpp"
#include "overlap/chunked_reduce_scatter.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"
#include "rank_failures.hpp"

namespace kiln {
namespace {

using overlap::GemmShape;
using overlap::WeightLayout;

int check_chunked(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  kiln::testing::RankFailures fail(comm.rank());
  core::Stream stream;
  overlap::CublasGemm cublas(1);
  const int world = comm.size();
  std::uint64_t seed = 100;
  // Both pipelines: every chunk on one compute stream (the default) and chunks alternating
  // between two.
  for (const int streams : {1, 2})
    for (const GemmShape shape :
         {GemmShape{256 * world, 768, 256}, GemmShape{96 * world, 520, 72}}) {
      for (const WeightLayout layout : {WeightLayout::kNK, WeightLayout::kKN}) {
        const std::string what =
            fmt::format("{}x{}x{} {}, {} compute stream(s)", shape.m, shape.n, shape.k,
                        layout == WeightLayout::kNK ? "nk" : "kn", streams);
        const std::size_t a_count = std::size_t(shape.m) * shape.k,
                          b_count = std::size_t(shape.n) * shape.k,
                          c_count = std::size_t(shape.m) * shape.n, out_count = c_count / world;
        // Three calls enqueued back to back, each on fresh inputs with its own reference and
        // output, and one host wait: a run that overwrote a peer's region before the peer summed
        // it, or read a staging buffer before its chunk was computed, shows in a later call's
        // output.
        constexpr int kCalls = 3;
        core::DeviceBuffer a(a_count * 2), b(b_count * 2), c(c_count * 2);
        std::vector<core::DeviceBuffer> want, got;
        for (int call = 0; call < kCalls; ++call) {
          want.emplace_back(out_count * 2);
          got.emplace_back(out_count * 2);
        }
        core::DeviceBuffer again(out_count * 2);
        overlap::ChunkedReduceScatter chunked(comm, shape, core::DType::kBf16, layout,
                                              overlap::current_device_sms(), false, streams);
        if (chunked.output_rows() != shape.m / world) fail(what + ": output rows");
        if (chunked.compute_streams() != streams) fail(what + ": compute streams");
        for (int call = 0; call < kCalls; ++call) {
          core::fill_uniform(a.data(), core::DType::kBf16, a_count, ++seed + 31 * comm.rank(),
                             stream);
          core::fill_uniform(b.data(), core::DType::kBf16, b_count, ++seed + 31 * comm.rank(),
                             stream);
          cublas.run(shape.m, shape.n, shape.k, core::DType::kBf16, layout, a.data(), b.data(),
                     c.data(), stream);
          comm.call("reference", [&] {
            return ncclReduceScatter(c.data(), want[call].data(), out_count, ncclBfloat16, ncclSum,
                                     comm.get(), stream);
          });
          core::poison(got[call].data(), got[call].bytes(), stream);
          chunked.run(a.data(), b.data(), got[call].data(), stream);
        }
        comm.wait(stream, what);
        for (int call = 0; call < kCalls; ++call) {
          const std::vector<float> g = testing::download_floats(got[call].data(), out_count);
          const std::vector<float> w = testing::download_floats(want[call].data(), out_count);
          bool finite = true;
          for (float x : g) finite = finite && std::isfinite(x);
          const double error = testing::relative_error(g, w);
          if (!finite || !(error <= 1e-2)) {
            fail(fmt::format("{} call {}: relative error {:.3g}{}", what, call, error,
                             finite ? "" : " (non-finite: a chunk never arrived)"));
          }
        }
        // The same inputs again: the same bits (the sum's order is fixed).
        core::poison(again.data(), again.bytes(), stream);
        chunked.run(a.data(), b.data(), again.data(), stream);
        comm.wait(stream, what + " again");
        if (testing::download_floats(again.data(), out_count) !=
            testing::download_floats(got[kCalls - 1].data(), out_count))
          fail(what + ": a second call on the same inputs differs");
      }
    }
  return fail.exit_code();
}

TEST(ChunkedReduceScatterGpu, MatchesCublasAndNcclOneRank) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(comm::launch_local_ranks(1, check_chunked), 0);
}

TEST(ChunkedReduceScatterGpu, MatchesCublasAndNcclTwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(kiln::testing::launch_test_ranks(2, check_chunked), 0);
}

// An odd world: two peer chunks, the second on the caller's stream when two compute streams run.
TEST(ChunkedReduceScatterGpu, MatchesCublasAndNcclThreeRanks) {
  KILN_SKIP_UNLESS_RANKS(3);
  EXPECT_EQ(kiln::testing::launch_test_ranks(3, check_chunked), 0);
}

TEST(ChunkedReduceScatterGpu, MatchesCublasAndNcclFourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  EXPECT_EQ(kiln::testing::launch_test_ranks(4, check_chunked), 0);
}

}  // namespace
}  // namespace kiln
