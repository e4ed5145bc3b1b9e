// Shared by the data-movement collective problems (allgather, alltoall, ...): NCCL is the
// reference, kiln's pull kernel over peer memory (comm/nvlink_collectives) the solution. Inputs
// are core::test_value(seed, rank, i), so the host rebuilds any rank's input to check the
// reference; a solution must match the reference byte for byte (data movement is exact).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "bench/problem.hpp"
#include "comm/communicator.hpp"
#include "comm/nvlink_collectives.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/fill.hpp"
#include "core/first_difference.hpp"
#include "core/half_bits.hpp"
#include "core/test_values.hpp"

namespace kiln::problems {

// Per-rank send sizes of the collective problems (bytes), nccl-tests style names.
inline std::vector<bench::ProblemSize> per_rank_byte_sizes() {
  std::vector<bench::ProblemSize> sizes;
  for (const auto& [name, bytes] :
       std::vector<std::pair<const char*, std::int64_t>>{{"16K", 16 << 10},
                                                         {"64K", 64 << 10},
                                                         {"256K", 256 << 10},
                                                         {"1M", 1 << 20},
                                                         {"4M", 4 << 20},
                                                         {"16M", 16 << 20},
                                                         {"64M", 64 << 20}}) {
    sizes.push_back({name, {{"bytes_per_rank", bytes}}});
  }
  return sizes;
}

// The value of element `e` of a host copy of a `dtype` buffer (test values are small integers,
// exact in every type).
inline double element_value(const unsigned char* data, core::DType dtype, std::size_t e) {
  switch (dtype) {
    case core::DType::kInt32: {
      int v;
      std::memcpy(&v, data + e * 4, 4);
      return v;
    }
    case core::DType::kFp32: {
      float v;
      std::memcpy(&v, data + e * 4, 4);
      return v;
    }
    default: {
      std::uint16_t bits;
      std::memcpy(&bits, data + e * 2, 2);
      return core::half_bits_to_float(bits, dtype);
    }
  }
}

// The kiln-nvlink kernels move whole 16-byte vectors: a size whose per-rank blocks are not (e.g.
// 16 KiB split over 3 ranks) cannot run; the suite skips it on every rank alike.
inline void require_whole_vectors(std::size_t block_bytes, const bench::ProblemSize& size,
                                  const std::string& problem, int world) {
  if (block_bytes == 0 || block_bytes % 16 != 0) {
    throw UsageError(
        fmt::format("{} {} on {} ranks: blocks of {} bytes are not whole 16-byte "
                    "vectors",
                    problem, size.name, world, block_bytes));
  }
}

// The same for one rank's block when `bytes` of `element`-sized values are split over `world`
// ranks in whole elements (as counts_for rounds).
inline void require_whole_blocks(std::size_t bytes, std::size_t element, int world,
                                 const bench::ProblemSize& size, const std::string& problem) {
  require_whole_vectors(bytes / element / world * element, size, problem, world);
}

// Element `index` of the sum over ranks of every rank's test values (the reductions' expected
// output; exact in every type).
inline int sum_over_ranks(std::uint64_t seed, int world, std::uint64_t index) {
  int sum = 0;
  for (int r = 0; r < world; ++r) sum += core::test_value(seed, r, index);
  return sum;
}

// Base of a peer-memory collective run: send buffer in peer memory, two outputs.
class PeerCollectiveRun : public bench::ProblemRun {
 public:
  PeerCollectiveRun(bench::RankContext& context, std::size_t send_bytes, std::size_t recv_bytes)
      : context_(context),
        element_(core::dtype_size(context.dtype)),
        send_bytes_(send_bytes),
        recv_bytes_(recv_bytes),
        nvlink_(context.comm, send_bytes),
        reference_out_(recv_bytes),
        solution_out_(recv_bytes) {}

  void make_inputs(std::uint64_t seed) override {
    seed_ = seed;
    core::fill_test_values(nvlink_.send_buffer(), context_.dtype, send_bytes_ / element_, seed,
                           context_.comm.rank(), context_.stream);
  }
  void poison_outputs() override {
    core::poison(reference_out_.data(), recv_bytes_, context_.stream);
    core::poison(solution_out_.data(), recv_bytes_, context_.stream);
  }
  std::string compare() override {
    // On the device: every judged call compares, and host copies of 64 MiB outputs cost tens of
    // ms a call.
    const auto differs = differences_.first(reference_out_.data(), solution_out_.data(),
                                            recv_bytes_, context_.stream);
    if (!differs) return "";
    const std::size_t i = *differs;
    unsigned char ref = 0, sol = 0;
    KILN_CUDA_CHECK(cudaMemcpy(&ref, static_cast<const unsigned char*>(reference_out_.data()) + i,
                               1, cudaMemcpyDeviceToHost));
    KILN_CUDA_CHECK(cudaMemcpy(&sol, static_cast<const unsigned char*>(solution_out_.data()) + i, 1,
                               cudaMemcpyDeviceToHost));
    return fmt::format("rank {}: output byte {} (element {}) is {:#04x}, the reference's {:#04x}",
                       context_.comm.rank(), i, i / element_, sol, ref);
  }
  bench::CandidateBuffers candidate_buffers() override {
    bench::CandidateBuffers b;
    b.inputs = {nvlink_.send_buffer()};
    b.input_bytes = {send_bytes_};
    for (void* peer : nvlink_.send_peers()) b.peer_inputs.push_back(peer);
    b.outputs = {solution_out_.data()};
    b.output_bytes = {recv_bytes_};
    return b;
  }

  // Checks the reference's output: element e must be expected(e), a core::test_value.
  template <typename Expected>
  std::string check_output(Expected&& expected) {
    std::vector<unsigned char> out(recv_bytes_);
    KILN_CUDA_CHECK(
        cudaMemcpy(out.data(), reference_out_.data(), recv_bytes_, cudaMemcpyDeviceToHost));
    for (std::size_t e = 0; e < recv_bytes_ / element_; ++e) {
      const double got = element_value(out.data(), context_.dtype, e);
      const int want = expected(e);
      if (got != want) {
        return fmt::format("rank {}: reference element {} is {}, expected {}", context_.comm.rank(),
                           e, got, want);
      }
    }
    return "";
  }

 protected:
  bench::RankContext& context_;
  std::size_t element_;
  std::size_t send_bytes_, recv_bytes_;
  std::uint64_t seed_ = 0;
  comm::NvlinkCollectives nvlink_;
  core::DeviceBuffer reference_out_, solution_out_;
  core::DifferenceFinder differences_;
};

}  // namespace kiln::problems
