// kiln's peer-memory collectives (comm/nvlink_collectives.hpp) with a late rank, from an epoch
// just past a 32-bit wrap (issue 18, defect 4): each call's data is what every rank wrote for that
// call, never the poison left before it. Rank 1 sleeps before writing its send buffer, so a barrier
// that let rank 0 through early would read the poison. Ranks share the GPU where there are fewer
// GPUs than ranks (peer memory between processes of one GPU).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/nvlink_collectives.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/fill.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace {

using namespace kiln;

std::vector<unsigned char> download(const void* data, std::size_t bytes) {
  std::vector<unsigned char> host(bytes);
  KILN_CUDA_CHECK(cudaMemcpy(host.data(), data, bytes, cudaMemcpyDeviceToHost));
  return host;
}

// Every rank past this point on the host (a tiny NCCL all-reduce, waited for).
void host_barrier(comm::Communicator& comm, core::DeviceBuffer& scratch, cudaStream_t stream) {
  comm.call("barrier", [&] {
    return ncclAllReduce(scratch.data(), scratch.data(), 1, ncclInt32, ncclSum, comm.get(), stream);
  });
  comm.wait(stream, "barrier");
}

int check_late_rank(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  core::Stream stream;
  constexpr std::size_t kCount = 1 << 18;  // int32 values per rank: 1 MiB
  constexpr std::size_t kBytes = kCount * 4;
  comm::NvlinkCollectives nv(comm, kBytes);
  nv.start_epochs_after((1ull << 31) + 100);  // the next call's epoch is past 2^31
  core::DeviceBuffer recv(kBytes * comm.size()), expected(kBytes), scratch(4);
  int failures = 0;
  for (int call = 0; call < 4; ++call) {
    core::poison(nv.send_buffer(), kBytes, stream);
    core::poison(recv.data(), recv.bytes(), stream);
    host_barrier(comm, scratch, stream);  // every rank's poison is in place
    if (comm.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    core::fill_test_values(nv.send_buffer(), core::DType::kInt32, kCount, 40 + call, comm.rank(),
                           stream);
    nv.all_gather(kBytes, recv.data(), stream);
    comm.wait(stream, fmt::format("all_gather call {}", call));
    const std::vector<unsigned char> got = download(recv.data(), recv.bytes());
    for (int j = 0; j < comm.size(); ++j) {
      core::fill_test_values(expected.data(), core::DType::kInt32, kCount, 40 + call, j, stream);
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
      const std::vector<unsigned char> want = download(expected.data(), kBytes);
      if (std::memcmp(got.data() + j * kBytes, want.data(), kBytes) != 0) {
        std::fprintf(stderr, "rank %d, call %d: rank %d's block is not what it sent\n", comm.rank(),
                     call, j);
        ++failures;
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

TEST(NvlinkCollectivesGpu, LateRankPastA32BitWrapTwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(kiln::testing::launch_test_ranks(2, check_late_rank), 0);
}

TEST(NvlinkCollectivesGpu, EpochsOnlyGrow) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(kiln::testing::launch_test_ranks(1,
                                             [](const comm::RankInfo& info) {
                                               comm::Communicator comm(info, 30.0);
                                               comm::NvlinkCollectives nv(comm, 1024);
                                               nv.start_epochs_after(10);
                                               try {
                                                 nv.start_epochs_after(5);
                                               } catch (const UsageError&) {
                                                 return 0;
                                               }
                                               return 1;
                                             }),
            0);
}

}  // namespace
