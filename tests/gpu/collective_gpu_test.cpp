// Each NCCL collective, on 1, 2 and 4 GPUs, for every dtype and awkward sizes, checked element by
// element against the host simulation (tests/common/host_collectives.hpp) on poisoned outputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "../common/host_collectives.hpp"
#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/fill.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace {

using kiln::comm::CollectiveOp;
using kiln::core::DType;

double element_as_double(const std::vector<unsigned char>& raw, DType dtype, std::uint64_t i) {
  switch (dtype) {
    case DType::kBf16: {
      __nv_bfloat16 v;
      std::memcpy(&v, raw.data() + 2 * i, 2);
      return __bfloat162float(v);
    }
    case DType::kFp16: {
      __half v;
      std::memcpy(&v, raw.data() + 2 * i, 2);
      return __half2float(v);
    }
    case DType::kFp32: {
      float v;
      std::memcpy(&v, raw.data() + 4 * i, 4);
      return v;
    }
    case DType::kInt32: {
      int v;
      std::memcpy(&v, raw.data() + 4 * i, 4);
      return v;
    }
  }
  return 0.0;
}

// Runs every op x dtype x size on this rank; returns the number of failing cases.
int check_all_collectives(const kiln::comm::RankInfo& info,
                          const std::vector<std::uint64_t>& sizes) {
  kiln::comm::Communicator comm(info, 60.0);
  kiln::core::Stream stream;
  int failures = 0;
  std::uint64_t seed = 0xA11CE + info.world_size;
  for (CollectiveOp op : kiln::comm::all_ops()) {
    for (DType dtype : kiln::core::all_dtypes()) {
      for (std::uint64_t bytes : sizes) {
        const std::size_t element = kiln::core::dtype_size(dtype);
        const auto counts = kiln::comm::counts_for(op, bytes, element, comm.size());
        if (counts.block_count == 0) continue;
        ++seed;  // fresh inputs for every case
        kiln::core::DeviceBuffer send(counts.send_count * element);
        kiln::core::DeviceBuffer recv(counts.recv_count * element);
        kiln::core::fill_test_values(send.data(), dtype, counts.send_count, seed, comm.rank(),
                                     stream);
        kiln::core::poison(recv.data(), recv.bytes(), stream);
        kiln::comm::enqueue_collective(comm, op, send.data(), recv.data(), counts, dtype, stream);
        comm.wait(stream, kiln::comm::op_name(op));
        std::vector<unsigned char> raw(recv.bytes());
        KILN_CUDA_CHECK(cudaMemcpy(raw.data(), recv.data(), raw.size(), cudaMemcpyDeviceToHost));
        const auto inputs = kiln::testing::host_inputs(seed, comm.size(), counts.send_count);
        const auto reference = kiln::testing::host_collective(op, inputs, counts, comm.rank());
        if (!reference) continue;
        std::uint64_t wrong = 0;
        std::uint64_t first = 0;
        for (std::uint64_t i = 0; i < counts.recv_count; ++i) {
          if (element_as_double(raw, dtype, i) != static_cast<double>((*reference)[i])) {
            if (wrong++ == 0) first = i;
          }
        }
        if (wrong != 0) {
          ++failures;
          std::fprintf(
              stderr, "rank %d: %s %s %llu bytes: %llu wrong, first at %llu (got %g, want %d)\n",
              comm.rank(), kiln::comm::op_name(op).c_str(), kiln::core::dtype_name(dtype).c_str(),
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(wrong),
              static_cast<unsigned long long>(first), element_as_double(raw, dtype, first),
              (*reference)[first]);
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

// Odd sizes: not multiples of the element size, of the world size, or of any vector width.
const std::vector<std::uint64_t> kSizes = {4, 60, 1000, 4100, 65540, 1000004, (3u << 20) + 36};

void run_on(int gpus) {
  const int code = kiln::testing::launch_test_ranks(
      gpus, [](const kiln::comm::RankInfo& info) { return check_all_collectives(info, kSizes); });
  EXPECT_EQ(code, 0) << "a rank reported wrong results (see stderr)";
}

}  // namespace

TEST(CollectivesGpu, OneRank) {
  KILN_SKIP_UNLESS_GPUS(1);
  run_on(1);
}

TEST(CollectivesGpu, TwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  run_on(2);
}

TEST(CollectivesGpu, FourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  run_on(4);
}
