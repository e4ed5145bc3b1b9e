// The one entrance for the plan an overlap call runs when given none (tune::automatic_plan, used by
// `kiln overlap bench --plan auto` too): it takes the plan cache's entry for the shape (rank 0's,
// on every rank, although each rank's cache holds another plan), which runs and gives the same bits
// as the same plan passed in; with no cache entry and no saved profile it takes kiln's built-in
// profile on the machines that have one (2xH200), else the default plan, and says which. Each
// plan's output is also checked against cuBLAS + NCCL AllReduce.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nccl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/fill.hpp"
#include "core/provenance.hpp"
#include "core/stream.hpp"
#include "device_compare.hpp"
#include "gpu_availability.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_collective.hpp"
#include "rank_failures.hpp"
#include "tune/automatic_plan.hpp"

namespace kiln {
namespace {

using overlap::GemmShape;

std::vector<unsigned char> download(const void* data, std::size_t bytes) {
  std::vector<unsigned char> out(bytes);
  EXPECT_EQ(cudaMemcpy(out.data(), data, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

int check_automatic_plan(const comm::RankInfo& info) {
  // Each rank is its own process: a private cache file and an empty cache directory, so that no
  // saved profile of the machine takes part.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    fmt::format("kiln-auto-plan-{}-{}", getppid(), info.rank);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "xdg");
  const std::string cache_path = (dir / "plans.json").string();
  setenv("KILN_PLAN_CACHE", cache_path.c_str(), 1);
  setenv("XDG_CACHE_HOME", (dir / "xdg").string().c_str(), 1);

  comm::Communicator comm(info, 60.0);
  core::Stream stream;
  kiln::testing::RankFailures fail(comm.rank());
  const GemmShape shape{1024, 2048, 512};
  const auto op = overlap::OverlapOp::kAllReduce;
  const auto dtype = core::DType::kBf16;
  const auto layout = overlap::WeightLayout::kNK;
  core::DeviceBuffer a(std::size_t(shape.m) * shape.k * 2), b(std::size_t(shape.n) * shape.k * 2),
      out_auto(std::size_t(shape.m) * shape.n * 2), out_given(std::size_t(shape.m) * shape.n * 2);
  core::fill_uniform(a.data(), dtype, std::size_t(shape.m) * shape.k, 11 + 31 * comm.rank(),
                     stream);
  core::fill_uniform(b.data(), dtype, std::size_t(shape.n) * shape.k, 12 + 31 * comm.rank(),
                     stream);
  const overlap::MatrixRef a_ref{a.data(), dtype, shape.m, shape.k};
  const overlap::MatrixRef b_ref{b.data(), dtype, shape.n, shape.k};
  // The reference: cuBLAS on each rank, summed by NCCL.
  core::DeviceBuffer reference(std::size_t(shape.m) * shape.n * 2);
  overlap::CublasGemm cublas;
  cublas.run(shape.m, shape.n, shape.k, dtype, layout, a.data(), b.data(), reference.data(),
             stream);
  comm.call("reference", [&] {
    return ncclAllReduce(reference.data(), reference.data(), std::size_t(shape.m) * shape.n,
                         ncclBfloat16, ncclSum, comm.get(), stream);
  });
  comm.wait(stream, "reference");
  const std::vector<float> want =
      kiln::testing::download_floats(reference.data(), std::size_t(shape.m) * shape.n);
  const auto check_output = [&](const core::DeviceBuffer& out, const std::string& what) {
    const double error = kiln::testing::relative_error(
        kiln::testing::download_floats(out.data(), std::size_t(shape.m) * shape.n), want);
    if (!(error <= 1e-2))
      fail(fmt::format("{}: relative error {} against cuBLAS + NCCL", what, error));
  };

  // 1. A cache entry for this device, world and shape: taken as it is.
  // The other ranks' caches hold another plan: every rank must run rank 0's (else their groups
  // differ and they wait on each other forever).
  const std::string cached =
      "tile=128x128 cap=16 raster=m swizzle=4 signal=eager comm=nccl groups=1,2,3,2";
  const std::string elsewhere =
      "tile=128x128 cap=16 raster=m swizzle=4 signal=eager comm=nccl groups=2,2,2,2";
  tune::PlanCache cache;
  cache.put({tune::current_plan_key(op, shape, dtype, comm.size()),
             comm.rank() == 0 ? cached : elsewhere, comm.rank() == 0 ? 12.5 : 99.0, -1.0});
  core::write_json_file(cache_path, cache.to_json());
  {
    const tune::PlanLookup found = tune::automatic_plan(comm, op, shape, dtype);
    overlap::GemmCollective automatic(op, shape, dtype, layout, comm, found.plan);
    if (found.source.rfind("cache ", 0) != 0)
      fail("plan source \"" + found.source + "\", expected the cache");
    if (overlap::to_string(automatic.plan()) != cached)
      fail("ran \"" + overlap::to_string(automatic.plan()) + "\", the cache holds \"" + cached +
           "\"");
    if (found.predicted_us != 12.5) fail("the cache entry's prediction was not kept");
    overlap::GemmCollective given(op, shape, dtype, layout, comm,
                                  overlap::parse_plan(cached, "cached"));
    core::poison(out_auto.data(), out_auto.bytes(), stream);
    core::poison(out_given.data(), out_given.bytes(), stream);
    automatic.run(a_ref, b_ref, {out_auto.data(), dtype, automatic.output_rows(), shape.n}, stream);
    given.run(a_ref, b_ref, {out_given.data(), dtype, given.output_rows(), shape.n}, stream);
    comm.wait(stream, "automatic vs given plan");
    if (download(out_auto.data(), out_auto.bytes()) !=
        download(out_given.data(), out_given.bytes()))
      fail("the automatic plan's output differs from the same plan given explicitly");
    check_output(out_auto, "the cached plan");
  }

  // 2. No cache entry, no saved profile: the built-in profile where kiln has one, else default.
  std::filesystem::remove(cache_path);
  {
    const tune::PlanKey key = tune::current_plan_key(op, shape, dtype, comm.size());
    const tune::PlanLookup found = tune::automatic_plan(comm, op, shape, dtype);
    overlap::GemmCollective automatic(op, shape, dtype, layout, comm, found.plan);
    const bool builtin = key.device == "h200-sxm" && key.world == 2;
    const std::string want = builtin ? "profile built-in " : "default";
    if (found.source.rfind(want, 0) != 0)
      fail(fmt::format("{} g{}: plan source \"{}\", expected \"{}...\"", key.device, key.world,
                       found.source, want));
    if (builtin && !(found.predicted_us > 0)) fail("no prediction from the built-in profile");
    core::poison(out_auto.data(), out_auto.bytes(), stream);
    automatic.run(a_ref, b_ref, {out_auto.data(), dtype, automatic.output_rows(), shape.n}, stream);
    comm.wait(stream, "built-in or default plan");
    check_output(out_auto, "the " + want + " plan");
    std::fprintf(stderr, "rank %d: %s\n", comm.rank(), automatic.describe().c_str());
  }
  std::filesystem::remove_all(dir);
  return fail.exit_code();
}

TEST(AutomaticPlanGpu, OneRank) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(comm::launch_local_ranks(1, check_automatic_plan), 0);
}

TEST(AutomaticPlanGpu, TwoRanks) {
  KILN_SKIP_UNLESS_RANKS(2);
  EXPECT_EQ(kiln::testing::launch_test_ranks(2, check_automatic_plan), 0);
}

}  // namespace
}  // namespace kiln
