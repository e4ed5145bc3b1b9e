// Issue 18's stress test of the overlap runtime: many back-to-back runs per configuration
// (eager / deferred signal, stream-wait / spin-kernel waits, NCCL / copy engines, ReduceScatter /
// AllReduce) on 2, 3 and 4 ranks, each run with fresh inputs, the slot, receive and exchange
// buffers poisoned after every run, random delays on one rank (a sleep kernel before its run on
// a random rank; the epilogue's test delay before about one tile in four signals on the last
// rank), runs alternating between two streams without synchronisation, and a GEMM launch that
// throws every kThrowPeriod-th run on every rank. Every element of every output is compared
// bitwise with a reference computed on the host.
//
// How the reference can be exact: B selects one column of A, scaled by a power of two that
// depends on the 64-column block (B[n][k] = column_scale(n) where k = n mod K, else 0), so rank
// r's GEMM result is exactly C_r[m][n] = A_r[m][n mod K] * column_scale(n), every column block of
// a tile row differs (a tile or group stored or read at the wrong place in its row shows), and
// every rank can rebuild every rank's inputs from the seeds. A power of two changes no rounding.
// What the sum of the parts must be then depends on the collective's arithmetic, and the inputs are
// chosen so that it is defined bit for bit:
//   - NCCL on 3+ ranks (any order of summation): A = j/8 with |j| <= 255 / world, so every partial
//     sum is a bf16 integer multiple of 1/8 below 32 in magnitude and exact in any order;
//   - NCCL on 2 ranks: bf16 values within 2^±6, whose fp32 sum is exact (one rounding to bf16);
//   - copy engines: bf16 values within 2^±20, whose fp32 sums round differently in different
//     orders. The reorder must sum in rank order for AllReduce (every rank the same bits; issue
//     18, defect 3), and for ReduceScatter the peers in rank order and the own part last.
// Runs per configuration: KILN_STRESS_RUNS (default 24; the device run uses 1000).
// KILN_STRESS_ONLY=a,b runs only the configurations whose name contains every comma-separated
// part (e.g. "comm=ce" or "ar signal,comm=nccl").
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/fill.hpp"
#include "core/half_bits.hpp"
#include "core/sleep.hpp"
#include "core/stream.hpp"
#include "faulty_gemm.hpp"
#include "gpu_availability.hpp"
#include "overlap/gemm_collective.hpp"

namespace {

using namespace kiln;
using overlap::OverlapOp;

constexpr int kBatch = 4;         // runs enqueued back to back before the host checks them
constexpr int kThrowPeriod = 53;  // every rank's GEMM launch throws on runs 17, 70, 123, ...
constexpr int kThrowPhase = 17;
constexpr unsigned kEpilogueDelayNs = 20000;
constexpr unsigned kMaxSleepNs = 200000;
const overlap::GemmShape kShape{500, 520, 64};  // 4x5 tiles of 128x128, 3 waves at cap=8

struct Config {
  OverlapOp op;
  bool deferred, spin, copy_engine;
  std::string name() const {
    return fmt::format("{} signal={} wait={} comm={}", overlap::overlap_op_name(op),
                       deferred ? "deferred" : "eager", spin ? "spin" : "stream",
                       copy_engine ? "ce" : "nccl");
  }
  std::string plan() const {
    return fmt::format("tile=128x128 cap=8 groups=each signal={} comm={}",
                       deferred ? "deferred" : "eager", copy_engine ? "ce" : "nccl");
  }
};

int runs_per_config() {
  const char* text = std::getenv("KILN_STRESS_RUNS");
  if (text == nullptr || *text == '\0') return 24;
  char* end = nullptr;
  const long runs = std::strtol(text, &end, 10);
  if (*end != '\0' || runs < 1 || runs > 1000000)
    throw UsageError(fmt::format("KILN_STRESS_RUNS={}: accepted range 1 .. 1000000", text));
  return static_cast<int>(runs);
}

// Whether `name` contains every comma-separated part of `only` (nullptr or "": everything).
bool selected(const std::string& name, const char* only) {
  if (only == nullptr) return true;
  const std::string parts = only;
  std::size_t start = 0;
  while (start <= parts.size()) {
    const std::size_t end = std::min(parts.find(',', start), parts.size());
    if (name.find(parts.substr(start, end - start)) == std::string::npos) return false;
    start = end + 1;
  }
  return true;
}

// 2^((n / 64) % 9 - 4): distinct for the 9 column blocks of kShape.n = 520.
float column_scale(int n) {
  return std::ldexp(1.0f, (n / 64) % 9 - 4);
}

std::uint16_t bf16_bits(float value) {
  const float rounded = core::round_to_bf16(value);
  std::uint32_t word;
  std::memcpy(&word, &rounded, sizeof(word));
  return static_cast<std::uint16_t>(word >> 16);
}

// Rank r's A for one run (M x K bf16 values as floats), from the run's seed: every rank can make
// every rank's.
std::vector<float> make_a(std::uint64_t seed, int rank, int world, bool exact, int exponent_span) {
  std::mt19937_64 random(seed * 1000003 + rank);
  std::vector<float> a(std::size_t(kShape.m) * kShape.k);
  const int j_max = 255 / world;
  for (float& v : a) {
    if (exact) {
      const int j = static_cast<int>(random() % (2 * j_max + 1)) - j_max;
      v = static_cast<float>(j) / 8.0f;
    } else {
      const int exponent = static_cast<int>(random() % (2 * exponent_span + 1)) - exponent_span;
      const float mantissa = 1.0f + static_cast<float>(random() % 128) / 128.0f;
      v = core::round_to_bf16(std::ldexp((random() & 1) ? -mantissa : mantissa, exponent));
    }
  }
  return a;
}

// The expected bits of this rank's output (output_rows x N), as the collective must sum.
std::vector<std::uint16_t> expected_output(const std::vector<std::vector<float>>& parts,
                                           const overlap::GemmCollective& gc, const Config& c,
                                           int rank) {
  const int world = static_cast<int>(parts.size());
  std::vector<int> order;  // the order of the fp32 sum (see the file comment)
  for (int r = 0; r < world; ++r)
    if (!(c.copy_engine && c.op == OverlapOp::kReduceScatter && r == rank)) order.push_back(r);
  if (c.copy_engine && c.op == OverlapOp::kReduceScatter) order.push_back(rank);
  const int rows = gc.output_rows(), n = kShape.n;
  std::vector<std::uint16_t> out(std::size_t(rows) * n);
  for (int lr = 0; lr < rows; ++lr) {
    const std::size_t row = static_cast<std::size_t>(gc.global_row(lr)) * kShape.k;
    for (int col = 0; col < n; ++col) {
      float sum = 0.0f;
      for (const int r : order) sum += parts[r][row + col % kShape.k] * column_scale(col);
      out[std::size_t(lr) * n + col] = bf16_bits(sum);
    }
  }
  return out;
}

int stress(const comm::RankInfo& info) {
  const int runs = runs_per_config();
  comm::Communicator comm(info, 60.0);
  const int world = comm.size(), rank = comm.rank();
  core::Stream streams[2];
  int failures = 0;

  // B: N x K, one 1 per row at column n mod K.
  core::DeviceBuffer b(std::size_t(kShape.n) * kShape.k * 2);
  {
    std::vector<std::uint16_t> host(std::size_t(kShape.n) * kShape.k, 0);
    for (int n = 0; n < kShape.n; ++n)
      host[std::size_t(n) * kShape.k + n % kShape.k] = bf16_bits(column_scale(n));
    KILN_CUDA_CHECK(cudaMemcpyAsync(b.data(), host.data(), host.size() * 2, cudaMemcpyHostToDevice,
                                    streams[0]));
    KILN_CUDA_CHECK(cudaStreamSynchronize(streams[0]));
  }
  const overlap::MatrixRef b_ref{b.data(), core::DType::kBf16, kShape.n, kShape.k};
  std::vector<core::DeviceBuffer> as, outs;
  for (int i = 0; i < kBatch; ++i) {
    as.emplace_back(std::size_t(kShape.m) * kShape.k * 2);
    outs.emplace_back(std::size_t(kShape.m) * kShape.n * 2);
  }

  std::vector<Config> configs;
  for (const OverlapOp op : {OverlapOp::kReduceScatter, OverlapOp::kAllReduce}) {
    // ReduceScatter needs a power-of-two world (tile rows split evenly).
    if (op == OverlapOp::kReduceScatter && (world & (world - 1)) != 0) continue;
    for (const bool ce : {false, true})
      for (const bool deferred : {false, true})
        for (const bool spin : {false, true}) configs.push_back({op, deferred, spin, ce});
  }

  const char* only = std::getenv("KILN_STRESS_ONLY");
  if (std::none_of(configs.begin(), configs.end(),
                   [&](const Config& c) { return selected(c.name(), only); })) {
    std::fprintf(stderr, "KILN_STRESS_ONLY=%s selects none of the %zu configurations on %d ranks\n",
                 only, configs.size(), world);
    return 1;
  }
  std::uint64_t config_index = 0;
  for (const Config& c : configs) {
    ++config_index;
    if (!selected(c.name(), only)) continue;
    const auto start = std::chrono::steady_clock::now();
    overlap::OverlapOptions options;
    options.force_spin_wait = c.spin;
    options.wait_timeout_s = 60.0;
    options.poison_workspace_after_run = true;
    options.debug_signal_delay_ns = rank == world - 1 ? kEpilogueDelayNs : 0;
    options.wrap_gemm = [](std::unique_ptr<overlap::SignalingGemm> gemm) {
      return std::make_unique<kiln::testing::FaultyGemm>(
          std::move(gemm), [](int call) { return call % kThrowPeriod == kThrowPhase; },
          kiln::testing::FaultyGemm::Fault::kThrow);
    };
    overlap::GemmCollective gc(c.op, kShape, core::DType::kBf16, overlap::WeightLayout::kNK, comm,
                               overlap::parse_plan(c.plan(), "plan"), options);
    const bool exact = !c.copy_engine && world > 2;
    const int span = c.copy_engine ? 20 : 6;
    const int rows = gc.output_rows();
    std::mt19937_64 delays(config_index * 7919 + 1);  // the same on every rank
    long long checked = 0, mismatched_runs = 0, thrown = 0;
    std::string first_mismatch;

    for (int first = 0; first < runs; first += kBatch) {
      const int batch = std::min(kBatch, runs - first);
      std::vector<std::vector<std::vector<float>>> parts(batch);
      for (int i = 0; i < batch; ++i) {
        const std::uint64_t seed = config_index * 1000000 + first + i;
        for (int r = 0; r < world; ++r) parts[i].push_back(make_a(seed, r, world, exact, span));
        std::vector<std::uint16_t> mine(parts[i][rank].size());
        for (std::size_t e = 0; e < mine.size(); ++e) mine[e] = bf16_bits(parts[i][rank][e]);
        KILN_CUDA_CHECK(cudaMemcpyAsync(as[i].data(), mine.data(), mine.size() * 2,
                                        cudaMemcpyHostToDevice, streams[0]));
        core::poison(outs[i].data(), outs[i].bytes(), streams[0]);
        KILN_CUDA_CHECK(cudaStreamSynchronize(streams[0]));  // `mine` goes out of scope
      }
      std::vector<bool> ran(batch, false);
      core::Event previous_run{cudaEventDisableTiming};
      for (int i = 0; i < batch; ++i) {
        cudaStream_t stream = streams[(first + i) % 2];
        const int late_rank = static_cast<int>(delays() % world);
        const std::uint64_t sleep_ns = delays() % kMaxSleepNs;
        // After the previous run (on the other stream), so that the sleep delays this run
        // rather than overlapping that one.
        if (i > 0) KILN_CUDA_CHECK(cudaStreamWaitEvent(stream, previous_run.get(), 0));
        if (rank == late_rank) core::enqueue_sleep(sleep_ns, stream);
        try {
          gc.run({as[i].data(), core::DType::kBf16, kShape.m, kShape.k}, b_ref,
                 {outs[i].data(), core::DType::kBf16, rows, kShape.n}, stream);
          ran[i] = true;
          previous_run.record(stream);
        } catch (const Error& e) {
          if ((first + i + 1) % kThrowPeriod != kThrowPhase) throw;
          ++thrown;
        }
      }
      gc.wait(streams[0]);
      gc.wait(streams[1]);
      for (int i = 0; i < batch; ++i) {
        if (!ran[i]) continue;
        std::vector<std::uint16_t> got(std::size_t(rows) * kShape.n);
        KILN_CUDA_CHECK(
            cudaMemcpy(got.data(), outs[i].data(), got.size() * 2, cudaMemcpyDeviceToHost));
        const std::vector<std::uint16_t> want = expected_output(parts[i], gc, c, rank);
        std::size_t wrong = 0, first_wrong = 0;
        for (std::size_t e = 0; e < got.size(); ++e) {
          if (got[e] != want[e] && wrong++ == 0) first_wrong = e;
        }
        ++checked;
        if (wrong > 0) {
          ++mismatched_runs;
          if (first_mismatch.empty()) {
            const int lr = static_cast<int>(first_wrong / kShape.n);
            const int col = static_cast<int>(first_wrong % kShape.n);
            first_mismatch = fmt::format(
                "run {}: {} of {} elements differ; first at local row {} (global {}), column {}: "
                "got bits {:04x} ({}), want {:04x} ({})",
                first + i + 1, wrong, got.size(), lr, gc.global_row(lr), col, got[first_wrong],
                core::half_bits_to_float(got[first_wrong], core::DType::kBf16), want[first_wrong],
                core::half_bits_to_float(want[first_wrong], core::DType::kBf16));
          }
        }
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "[ STRESS   ] rank %d/%d %-50s runs %d, checked %lld, thrown %lld, wrong %lld "
        "(%s inputs, %.1f s)\n",
        rank, world, c.name().c_str(), runs, checked, thrown, mismatched_runs,
        exact ? "exact-sum" : "mixed-scale", seconds);
    std::fflush(stdout);
    if (mismatched_runs > 0) {
      std::fprintf(stderr, "rank %d, %s: %s\n", rank, c.name().c_str(), first_mismatch.c_str());
      ++failures;
    }
    if (checked + thrown != runs) {
      std::fprintf(stderr, "rank %d, %s: %lld checked + %lld thrown != %d runs\n", rank,
                   c.name().c_str(), checked, thrown, runs);
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

void run_stress(int world) {
  comm::LaunchOptions options;
  options.time_limit_seconds = 3600.0;
  const int code = kiln::testing::launch_test_ranks(world, stress, options);
  EXPECT_EQ(code, 0) << "a rank reported a failure (see stderr)";
}

TEST(OverlapStressGpu, TwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  run_stress(2);
}
TEST(OverlapStressGpu, ThreeRanks) {
  KILN_SKIP_UNLESS_RANKS(3);
  run_stress(3);
}
TEST(OverlapStressGpu, FourRanks) {
  KILN_SKIP_UNLESS_RANKS(4);
  run_stress(4);
}

}  // namespace
