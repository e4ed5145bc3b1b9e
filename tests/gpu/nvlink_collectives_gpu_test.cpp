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
#include "core/half_bits.hpp"
#include "core/sleep.hpp"
#include "core/stream.hpp"
#include "core/test_values.hpp"
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

// Every all-reduce algorithm gives the exact sum (test values are small integers, exact in bf16
// and int32) on a vector count that does not split evenly over the ranks, over calls whose inputs
// change, with a rank that writes its input late and a rank whose two-shot phase 1 starts 2 ms
// after the first barrier: a second barrier of the two-shot kernel that let a rank gather a segment
// before its owner reduced it would read the last call's sum. 9 MiB takes the two-shot grid more
// than one pass at 3 and 4 ranks.
int check_all_reduce_algorithms(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  core::Stream stream;
  constexpr std::size_t kMaxBytes = 9 << 20;
  comm::NvlinkCollectives nv(comm, kMaxBytes);
  nv.reserve_two_shot();
  nv.reserve_lamport(kMaxBytes);
  if (comm.rank() == comm.size() - 1) nv.debug_delay_two_shot(2'000'000);
  core::DeviceBuffer recv(kMaxBytes), scratch(4);
  int failures = 0, call = 0;
  // Empty calls do nothing (twice in a row: a Lamport call that took a buffer turn for them would
  // let a peer run ahead); fp32 and int32 Lamport calls are refused on every rank.
  nv.all_reduce(core::DType::kBf16, 0, recv.data(), stream, comm::AllReduceAlgorithm::kLamport);
  nv.all_reduce(core::DType::kBf16, 0, recv.data(), stream, comm::AllReduceAlgorithm::kAuto);
  for (const core::DType refused : {core::DType::kFp32, core::DType::kInt32}) {
    try {
      nv.all_reduce(refused, 256, recv.data(), stream, comm::AllReduceAlgorithm::kLamport);
      std::fprintf(stderr, "rank %d: a %s Lamport all-reduce was accepted\n", comm.rank(),
                   core::dtype_name(refused).c_str());
      ++failures;
    } catch (const UsageError&) {
    }
  }
  const comm::AllReduceAlgorithm algorithms[] = {
      comm::AllReduceAlgorithm::kOneShot, comm::AllReduceAlgorithm::kTwoShot,
      comm::AllReduceAlgorithm::kAuto, comm::AllReduceAlgorithm::kLamport};
  for (const core::DType dtype : {core::DType::kBf16, core::DType::kInt32}) {
    const std::size_t element = core::dtype_size(dtype);
    // 16 B .. 3 MiB and back: one vector, fewer vectors than ranks, an odd count, more than one
    // grid pass, then smaller calls on buffers a larger one filled (Lamport empties what it read).
    for (const std::size_t vectors :
         {std::size_t{1}, std::size_t{2}, std::size_t{4099}, std::size_t{(9 << 20) / 16},
          std::size_t{4099}, std::size_t{1}, std::size_t{(3 << 20) / 16}}) {
      const std::size_t bytes = vectors * 16, count = bytes / element;
      for (int a = 0; a < 4; ++a, ++call) {
        // Lamport is bf16/fp16 only: an int32 call must be refused, not summed wrongly.
        if (algorithms[a] == comm::AllReduceAlgorithm::kLamport && dtype == core::DType::kInt32) {
          try {
            nv.all_reduce(dtype, count, recv.data(), stream, algorithms[a]);
            std::fprintf(stderr, "rank %d: an int32 Lamport all-reduce was accepted\n",
                         comm.rank());
            ++failures;
          } catch (const UsageError&) {
          }
          continue;
        }
        core::poison(nv.send_buffer(), bytes, stream);
        core::poison(recv.data(), bytes, stream);
        host_barrier(comm, scratch, stream);
        if (comm.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        core::fill_test_values(nv.send_buffer(), dtype, count, 900 + call, comm.rank(), stream);
        nv.all_reduce(dtype, count, recv.data(), stream, algorithms[a]);
        comm.wait(stream, fmt::format("all_reduce call {}", call));
        const std::vector<unsigned char> got = download(recv.data(), bytes);
        for (std::size_t e = 0; e < count; ++e) {
          int want = 0;
          for (int r = 0; r < comm.size(); ++r) want += core::test_value(900 + call, r, e);
          double value;
          if (dtype == core::DType::kInt32) {
            int v;
            std::memcpy(&v, got.data() + e * 4, 4);
            value = v;
          } else {
            std::uint16_t bits;
            std::memcpy(&bits, got.data() + e * 2, 2);
            value = core::half_bits_to_float(bits, dtype);
          }
          if (value != want) {
            std::fprintf(stderr, "rank %d, algorithm %d, %zu vectors: element %zu is %g, not %d\n",
                         comm.rank(), a, vectors, e, value, want);
            ++failures;
            break;
          }
        }
        host_barrier(comm, scratch, stream);  // no peer still reads this call's inputs
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

// The broadcast, whole-root pull below 1 MiB and scatter + all-gather above (from three ranks),
// from the last rank, a late root, a rank whose scatter part starts 2 ms late, sizes that do not
// split evenly over the ranks, 9 MiB (more than one grid pass): every rank ends with the root's
// bytes, never poison or an earlier call's.
int check_broadcast(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  core::Stream stream;
  constexpr std::size_t kMaxBytes = 9 << 20;
  comm::NvlinkCollectives nv(comm, kMaxBytes);
  nv.reserve_two_shot();
  if (comm.rank() == 0) nv.debug_delay_two_shot(2'000'000);  // a non-root's phase 1 late
  core::DeviceBuffer recv(kMaxBytes), expected(kMaxBytes), scratch(4);
  const int root = comm.size() - 1;
  int failures = 0, call = 0;
  for (const std::size_t vectors :
       {std::size_t{1}, std::size_t{4099}, std::size_t{(1 << 20) / 16 + 3}, kMaxBytes / 16}) {
    for (int repeat = 0; repeat < 2; ++repeat, ++call) {
      const std::size_t bytes = vectors * 16, count = bytes / 4;
      core::poison(nv.send_buffer(), bytes, stream);
      core::poison(recv.data(), bytes, stream);
      host_barrier(comm, scratch, stream);
      if (comm.rank() == root) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        core::fill_test_values(nv.send_buffer(), core::DType::kInt32, count, 700 + call, root,
                               stream);
      }
      nv.broadcast(bytes, root, recv.data(), stream);
      core::fill_test_values(expected.data(), core::DType::kInt32, count, 700 + call, root, stream);
      comm.wait(stream, fmt::format("broadcast call {}", call));
      if (download(recv.data(), bytes) != download(expected.data(), bytes)) {
        std::fprintf(stderr, "rank %d: broadcast of %zu bytes differs from the root's\n",
                     comm.rank(), bytes);
        ++failures;
      }
      host_barrier(comm, scratch, stream);
    }
  }
  return failures == 0 ? 0 : 1;
}

// Lamport calls back to back with no host meeting between them, sizes growing and shrinking, a
// different rank held back (a GPU sleep) before each call, inputs rewritten in stream order between
// calls (Lamport reads its input only locally), -0.0 in the inputs (all ranks at one element, rank
// 0 alone at another): every call's output in its own slice is the exact sum. A buffer reused too
// early, a slot not emptied after reading, or -0.0 read as "not arrived" fails or hangs (traps).
int check_lamport_back_to_back(const comm::RankInfo& info) {
  comm::Communicator comm(info, 60.0);
  core::Stream stream;
  constexpr std::size_t kCapacity = 3 << 20;
  comm::NvlinkCollectives nv(comm, kCapacity);
  nv.reserve_lamport(kCapacity);
  const std::vector<std::size_t> vectors = {1, 4099, 65536, 3, 1024, 70000, 1, 16, 196608, 2, 8};
  std::size_t total = 0;
  for (std::size_t v : vectors) total += v * 16;
  core::DeviceBuffer out(total), scratch(4);
  const std::uint16_t negative_zero = 0x8000;
  host_barrier(comm, scratch, stream);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    const std::size_t count = vectors[i] * 8;  // bf16
    core::fill_test_values(nv.send_buffer(), core::DType::kBf16, count, 500 + i, comm.rank(),
                           stream);
    if (count > 7) {
      auto* send = static_cast<std::uint16_t*>(nv.send_buffer());
      KILN_CUDA_CHECK(cudaMemcpyAsync(send + 5, &negative_zero, 2, cudaMemcpyHostToDevice, stream));
      if (comm.rank() == 0) {
        KILN_CUDA_CHECK(
            cudaMemcpyAsync(send + 7, &negative_zero, 2, cudaMemcpyHostToDevice, stream));
      }
    }
    if (static_cast<int>(i % comm.size()) == comm.rank()) core::enqueue_sleep(300'000, stream);
    nv.all_reduce(core::DType::kBf16, count, static_cast<char*>(out.data()) + offset, stream,
                  comm::AllReduceAlgorithm::kLamport);
    offset += vectors[i] * 16;
  }
  comm.wait(stream, "Lamport calls back to back");
  const std::vector<unsigned char> got = download(out.data(), total);
  int failures = 0;
  offset = 0;
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    const std::size_t count = vectors[i] * 8;
    for (std::size_t e = 0; e < count; ++e) {
      double want = 0;
      for (int r = 0; r < comm.size(); ++r) {
        const bool zero = count > 7 && (e == 5 || (e == 7 && r == 0));
        want += zero ? 0 : core::test_value(500 + i, r, e);
      }
      std::uint16_t bits;
      std::memcpy(&bits, got.data() + offset + e * 2, 2);
      const double value = core::half_bits_to_float(bits, core::DType::kBf16);
      if (value != want) {
        std::fprintf(stderr, "rank %d, call %zu (%zu vectors): element %zu is %g, not %g\n",
                     comm.rank(), i, vectors[i], e, value, want);
        ++failures;
        break;
      }
    }
    offset += vectors[i] * 16;
  }
  return failures == 0 ? 0 : 1;
}

TEST(NvlinkCollectivesGpu, LamportBackToBackTwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(kiln::testing::launch_test_ranks(2, check_lamport_back_to_back), 0);
}

TEST(NvlinkCollectivesGpu, LamportBackToBackFourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  EXPECT_EQ(kiln::testing::launch_test_ranks(4, check_lamport_back_to_back), 0);
}

// The all-gather's rotated read order at more than two ranks, with the late rank.
TEST(NvlinkCollectivesGpu, LateRankPastA32BitWrapFourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  EXPECT_EQ(kiln::testing::launch_test_ranks(4, check_late_rank), 0);
}

TEST(NvlinkCollectivesGpu, BroadcastExactThreeRanks) {
  KILN_SKIP_UNLESS_RANKS(3);
  EXPECT_EQ(kiln::testing::launch_test_ranks(3, check_broadcast), 0);
}

TEST(NvlinkCollectivesGpu, BroadcastExactFourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  EXPECT_EQ(kiln::testing::launch_test_ranks(4, check_broadcast), 0);
}

TEST(NvlinkCollectivesGpu, AllReduceAlgorithmsExactThreeRanks) {
  KILN_SKIP_UNLESS_RANKS(3);
  EXPECT_EQ(kiln::testing::launch_test_ranks(3, check_all_reduce_algorithms), 0);
}

TEST(NvlinkCollectivesGpu, AllReduceAlgorithmsExactFourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  EXPECT_EQ(kiln::testing::launch_test_ranks(4, check_all_reduce_algorithms), 0);
}

TEST(NvlinkCollectivesGpu, TwoShotNeedsItsStaging) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(kiln::testing::launch_test_ranks(1,
                                             [](const comm::RankInfo& info) {
                                               comm::Communicator comm(info, 30.0);
                                               comm::NvlinkCollectives nv(comm, 1024);
                                               core::DeviceBuffer out(1024);
                                               try {
                                                 nv.all_reduce(core::DType::kInt32, 256, out.data(),
                                                               nullptr,
                                                               comm::AllReduceAlgorithm::kTwoShot);
                                               } catch (const UsageError&) {
                                                 return 0;
                                               }
                                               return 1;
                                             }),
            0);
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
