// The sm90 3xTF32 matmul candidates (see matmul_sm90_generator.hpp). Shapes as in
// matmul_generator.cpp: C (m x n, row-major) = A (m x k) @ B (k x n) per batch, A stored k x m
// when transposed, B stored n x k when transposed.
#include "evolve/matmul_sm90_generator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "evolve/matmul_sm90_register_split.hpp"
#include "evolve/source_text.hpp"

namespace kiln::evolve {

Sm90MatmulConfig sm90_matmul_config_of(const Genome& g) {
  Sm90MatmulConfig c{};
  c.tile_m = g.knob("cutlass-sm90", "tile_m");
  c.tile_n = g.knob("cutlass-sm90", "tile_n");
  c.cluster_m = g.knob("cutlass-sm90", "cluster_m");
  c.pingpong = g.knob("cutlass-sm90", "schedule") == 1;
  c.raster_n = g.knob("cutlass-sm90", "raster_n") == 1;
  c.swizzle = g.knob("cutlass-sm90", "swizzle");
  c.split_k = g.knob("cutlass-sm90", "split_k");
  c.promote = g.knob("cutlass-sm90", "promote");
  c.copies = g.knob("cutlass-sm90", "copies");
  // A split in registers (copies 1) has its own main loop, without promoted accumulation: with
  // promote the split goes back to two copies.
  if (c.copies == 1 && c.promote > 0) c.copies = 2;
  c.register_b = c.copies == 1 && g.knob("cutlass-sm90", "register_operand") == 1;
  c.register_mn_major = false;  // the problem's: generate_sm90_matmul_candidate sets it
  c.shared_split = c.copies == 1 ? g.knob("cutlass-sm90", "shared_split") : 0;
  // The transform warp's barriers are its block's own: clusters of one block
  // (matmul_sm90_register_split.cpp).
  if (c.shared_split == 2) c.cluster_m = 1;
  // Cooperative: two consumer warp groups split the tile's rows, 64 each at least. Ping-pong:
  // one warp group holds the whole tile. A warp group's share of the fp32 accumulators is at
  // most 128 registers a thread (64 x 256 or 128 x 128), and with promoted accumulation, which
  // keeps two sets, at most 64 + 64 (64 x 128). Larger tiles shrink along their longer side.
  if (!c.pingpong) c.tile_m = std::max(c.tile_m, 128);
  const int group_area = c.promote > 0 ? 64 * 128 : 128 * 128;
  const int max_area = c.pingpong ? group_area : 2 * group_area;
  // A split in registers holds A's tile and two of B's a stage: 128 x 256 leaves room for two
  // stages and ran at a third of 128 x 128's speed (four stages), 256 x 128 (three) 6-10%
  // slower (one H200, docs/results/2026-11-30e-register-split, call 3): at most 128 x 128.
  // Ping-pong's one warp group holds the whole tile and A's split fragments: 128 x 128 needs
  // more registers than it has and ptxas serialises every wgmma (C7512; 64 x 128 and 128 x 64
  // do not): at most 64 x 128 there.
  const int stage_area = c.copies == 1 ? (c.pingpong ? 64 * 128 : 128 * 128) : max_area;
  while (c.tile_m * c.tile_n > std::min(max_area, stage_area)) {
    if (c.tile_n >= c.tile_m)
      c.tile_n /= 2;
    else
      c.tile_m /= 2;
  }
  return c;
}

namespace {

// The builder's main loop with promoted accumulation (CUTLASS's FP8 main loop, whose pieces are
// the same; `{kernel}` is filled with the schedule).
constexpr const char* kPromotedMainloop =
    R"(// The builder's main loop with promoted accumulation (CUTLASS's FP8 main loop, whose pieces are
// the same): wgmma accumulates `promote` instructions into fresh registers, which are then added
// to the fp32 accumulators by the CUDA cores. Hopper's tensor cores truncate as they accumulate,
// which over a long K biases sums of positive terms (-0.37% over 786k terms in one accumulator,
// H100, 2026-11-25): promoted, each truncating run is `promote` x 8 terms long.
using Mainloop = cutlass::gemm::collective::CollectiveMma<
    cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Built::DispatchPolicy::Stages, Cluster,
                                                         Built::DispatchPolicy::Schedule>,
    Tile, float, typename Built::StrideA, float, typename Built::StrideB,
    typename Built::TiledMma, typename Built::GmemTiledCopyA, typename Built::SmemLayoutAtomA,
    typename Built::SmemCopyAtomA, typename Built::TransformA, typename Built::GmemTiledCopyB,
    typename Built::SmemLayoutAtomB, typename Built::SmemCopyAtomB, typename Built::TransformB>;
)";

// The main loop over two copies of each operand (copies = 2): see sm90_tf32_gemm_unit.
constexpr const char* kPhasedMainloop =
    R"(// 3xTF32 from two copies of each operand (X'' = [Xb | Xs], K-major rows of 2 kp): the GEMM
// runs over a virtual K of 3 kp in three phases of kp, (Ab, Bb), (Ab, Bs) and (As, Bb). Only the
// producer's TMA loads know: in the second phase B's tiles come from its second half, in the
// third A's do, and no load reaches past the stored 2 kp; the consumers see one K loop. With
// `slices` > 1 the batch (L) is split-K's slices of the virtual K, each its own partial product:
// a slice's tile t is virtual tile l * (its k-tiles) + t, loaded from batch 0 of a descriptor
// over the whole stored row. copies = 3 is the builder's main loop unchanged.
// kiln-phase-runs: begin
// The virtual k-tiles [v, v + count) of a two-copy product with phases of kt tiles, in runs that
// stay in one phase: f(offset, n, a_tile, b_tile) for each, `offset` its first tile counted from
// v, n its length, a_tile and b_tile the tiles of [Xb | Xs] that A and B load for its first tile
// (A: Ab, Ab, As; B: Bb, Bs, Bb by phase; the run's next tiles follow on).
template <class F>
CUTE_HOST_DEVICE void for_each_phase_run(int v, int count, int kt, F&& f) {
  for (int offset = 0; offset < count;) {
    const int at = v + offset, phase = at / kt;
    const int left = (phase + 1) * kt - at;
    const int n = count - offset < left ? count - offset : left;
    f(offset, n, at - (phase == 0 ? 0 : kt), at - (phase == 2 ? 2 * kt : 0));
    offset += n;
  }
}
// kiln-phase-runs: end

template <class Base>
struct PhasedMainloop : Base {
  struct Arguments : Base::Arguments {
    int copies = 3;
    int slices = 1;  // > 1: L is slices of one product's virtual K, not a batch of products
  };
  struct Params : Base::Params {
    int phase_k_tiles = 0;  // k-tiles of one phase; 0: three copies, no phases
    int slice_k_tiles = 0;  // k-tiles of one slice where L is slices; 0: L is a batch
  };
  static constexpr int kTileK = cute::size<2>(typename Base::TileShape{});

  template <class ProblemShape>
  static bool can_implement(ProblemShape const& shape, Arguments const& args) {
    if (args.copies != 2 && args.copies != 3) return false;
    if (args.slices < 1 || (args.slices > 1 && args.slices != cute::get<3>(shape))) return false;
    const long long k = cute::get<2>(shape);
    if (args.copies == 2 && (k % kTileK != 0 || k * args.slices % (3 * kTileK) != 0)) return false;
    return Base::can_implement(shape, args);
  }

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const& shape, Arguments const& args,
                                        void* workspace) {
    const int m = cute::get<0>(shape), n = cute::get<1>(shape), k = cute::get<2>(shape),
              l = cute::get<3>(shape);
    if (args.copies != 2) return Params{Base::to_underlying_arguments(shape, args, workspace)};
    // The descriptors span the stored row (2 kp of the virtual 3 kp); a slice's loads are
    // placed in it by load() below.
    const int virtual_k = k * args.slices;
    Params params{Base::to_underlying_arguments(cute::make_shape(m, n, virtual_k / 3 * 2, l), args,
                                                workspace)};
    params.phase_k_tiles = virtual_k / 3 / kTileK;
    params.slice_k_tiles = args.slices > 1 ? k / kTileK : 0;
    return params;
  }

  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(Params const& params, typename Base::MainloopPipeline pipeline,
                           typename Base::PipelineState smem_pipe_write,
                           cute::tuple<TensorA, TensorB> const& load_inputs,
                           BlockCoord const& blk_coord, KTileIterator k_tile_iter, int k_tile_count,
                           int thread_idx, uint32_t block_rank_in_cluster,
                           typename Base::TensorStorage& shared_tensors) {
    if (params.phase_k_tiles == 0) {
      Base::load(params, pipeline, smem_pipe_write, load_inputs, blk_coord, k_tile_iter,
                 k_tile_count, thread_idx, block_rank_in_cluster, shared_tensors);
      return;
    }
    const int slice = params.slice_k_tiles > 0 ? static_cast<int>(cute::get<3>(blk_coord)) : 0;
    auto const& gA = cute::get<0>(load_inputs);  // (BLK_M, BLK_K, m, k, l)
    auto const& gB = cute::get<1>(load_inputs);
    const int local = *k_tile_iter;  // the tile load() indexes in batch `slice`
    for_each_phase_run(
        slice * params.slice_k_tiles + local, k_tile_count, params.phase_k_tiles,
        [&](int offset, int n, int a_tile, int b_tile) {
          // Views in which tile local + offset of batch `slice` is tile a_tile (b_tile) of
          // batch 0.
          const int at = local + offset;
          Base::load(params, pipeline, smem_pipe_write,
                     cute::make_tuple(
                         cute::domain_offset(cute::make_coord(0, 0, 0, a_tile - at, -slice), gA),
                         cute::domain_offset(cute::make_coord(0, 0, 0, b_tile - at, -slice), gB)),
                     blk_coord, cute::make_coord_iterator(at, cute::shape<3>(gA)), n, thread_idx,
                     block_rank_in_cluster, shared_tensors);
          smem_pipe_write.advance(n);
        });
  }
};
using KernelMainloop = PhasedMainloop<Mainloop>;
)";

}  // namespace

std::string tf32_split_helpers() {
  return R"(// The split operands (and partial sums) live in one workspace, kept between calls and
// grown when a call needs more, and freed when the library is unloaded: a judge server loads
// candidate after candidate into one process, and a batched product's split operands take 4 GB.
static float* split_workspace_data = nullptr;
static size_t split_workspace_capacity = 0;
__attribute__((destructor)) static void release_split_workspace() {
  if (split_workspace_data != nullptr) cudaFree(split_workspace_data);
}

// The workspace for `floats` floats; false when it cannot be had.
static bool split_workspace(size_t floats, float** out) {
  if (floats > split_workspace_capacity) {
    cudaFree(split_workspace_data);
    split_workspace_data = nullptr;
    split_workspace_capacity = 0;
    if (cudaMalloc(&split_workspace_data, floats * sizeof(float)) != cudaSuccess) return false;
    split_workspace_capacity = floats;
  }
  *out = split_workspace_data;
  return true;
}

// The problem's dimension `name` (0 when absent).
static long long dim(const KilnCandidateArgs* a, const char* name) {
  for (int i = 0; i < a->num_dims; ++i)
    if (std::strcmp(a->dim_names[i], name) == 0) return a->dims[i];
  return 0;
}

// x rounded to the nearest TF32 value (10 mantissa bits), as an fp32 bit pattern.
__device__ __forceinline__ float tf32_big(float x) {
  unsigned int r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}
)";
}

std::string sm90_gemm_entry_text(const std::string& extra_parameters,
                                 const std::string& mainloop_arguments, bool column_strides,
                                 const std::string& before_run) {
  std::string text =
      R"(// 0 on success, else the step that failed: 5 CUTLASS cannot run it, 6 workspace, 7 initialise,
// 8 launch.
extern "C" __attribute__((visibility("hidden"))) int kiln_sm90_tf32_gemm(
    const float* A, const float* B, float* D, int m, int n, int k, int batch, long long lda,
    long long ldb, long long ldd, long long batch_a, long long batch_b, long long batch_d,
    int raster_n, int swizzle, int promote, void* stream$EXTRA_PARAMETERS) {
  using kiln_unit::Gemm;
  using kiln_unit::Kernel;
  static int sms = 0;
  static void* workspace = nullptr;
  static size_t workspace_bytes = 0;
  if (sms == 0) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return 5;
    sms = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
  }
$STRIDES
  cutlass::KernelHardwareInfo hw;
  hw.sm_count = sms;
  (void)cudaGetDevice(&hw.device_id);
  (void)promote;
  typename Kernel::TileSchedulerArguments scheduler;
  scheduler.max_swizzle_size = swizzle;
  using Raster = typename Kernel::TileScheduler::RasterOrderOptions;
  scheduler.raster_order = raster_n ? Raster::AlongN : Raster::AlongM;
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                {m, n, k, batch},
                                $MAINLOOP_ARGUMENTS,
                                {{1.0f, 0.0f}, nullptr, stride_d, D, stride_d},
                                hw,
                                scheduler};
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return 5;
  const size_t need = Gemm::get_workspace_size(args);
  if (need > workspace_bytes) {
    cudaFree(workspace);
    workspace = nullptr;
    workspace_bytes = 0;
    if (cudaMalloc(&workspace, need) != cudaSuccess) return 6;
    workspace_bytes = need;
  }
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (gemm.initialize(args, workspace, s) != cutlass::Status::kSuccess) return 7;
$BEFORE_RUN  if (gemm.run(s) != cutlass::Status::kSuccess) return 8;
  return 0;
}
)";
  // Row-major strides (ld first, as the units before column strides wrote them), or either.
  replace_all(
      text, "$STRIDES",
      column_strides
          ? R"(  // A's and D's leading dimension where their stride is dynamic: the first mode
  // (row-major, K-major A) or the second (column-major, M-major A).
  const auto set_strides = [](auto& stride, long long ld, long long batch) {
    if constexpr (cute::is_static<
                      cute::remove_cvref_t<decltype(cute::get<0>(stride))>>::value)
      cute::get<1>(stride) = ld;
    else
      cute::get<0>(stride) = ld;
    cute::get<2>(stride) = batch;
  };
  typename Kernel::StrideA stride_a{};
  set_strides(stride_a, lda, batch_a);
  typename Kernel::StrideB stride_b{};
  set_strides(stride_b, ldb, batch_b);
  typename Kernel::StrideD stride_d{};
  set_strides(stride_d, ldd, batch_d);)"
          : R"(  typename Kernel::StrideA stride_a{};
  cute::get<0>(stride_a) = lda;
  cute::get<2>(stride_a) = batch_a;
  typename Kernel::StrideB stride_b{};
  cute::get<0>(stride_b) = ldb;
  cute::get<2>(stride_b) = batch_b;
  typename Kernel::StrideD stride_d{};
  cute::get<0>(stride_d) = ldd;
  cute::get<2>(stride_d) = batch_d;)");
  replace_all(text, "$BEFORE_RUN", before_run);
  replace_all(text, "$EXTRA_PARAMETERS", extra_parameters);
  replace_all(text, "$MAINLOOP_ARGUMENTS", mainloop_arguments);
  return text;
}

std::string sm90_tf32_gemm_unit(const Sm90MatmulConfig& c) {
  if (c.copies == 1) return sm90_register_split_gemm_unit(c);
  return fmt::format(
      R"(// kiln-unit: begin
// CUTLASS 3.x sm90 GEMM on TF32 tensor cores: tile {tm}x{tn}x32, cluster {cm}x1, {schedule}.
// D (row-major) = A (row-major, K-major) B^T (B stored n x k, K-major), fp32 in and out, over
// `batch` products with the given strides. The same text for every problem: built once per
// configuration (kiln's build cache).
{release}#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

namespace kiln_unit {{
using Tile = cute::Shape<cute::Int<{tm}>, cute::Int<{tn}>, cute::Int<32>>;
using Cluster = cute::Shape<cute::Int<{cm}>, cute::_1, cute::_1>;
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor,
    4, float, cutlass::layout::RowMajor, 4, {epilogue}>::CollectiveOp;
using Built = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, cutlass::layout::RowMajor, 4, float,
    cutlass::layout::ColumnMajor, 4, float, Tile, Cluster,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
        sizeof(typename Epilogue::SharedStorage))>,
    {kernel}>::CollectiveOp;
{mainloop}{phased}using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, {kernel_mainloop},
                                                    Epilogue, cutlass::gemm::PersistentScheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
}}  // namespace kiln_unit

{entry}// kiln-unit: end
)",
      fmt::arg("mainloop", c.promote > 0 ? kPromotedMainloop : "using Mainloop = Built;\n"),
      // Three copies: the text as before the knob existed (the same unit keys).
      fmt::arg("phased", c.copies == 2 ? kPhasedMainloop : ""),
      fmt::arg("kernel_mainloop", c.copies == 2 ? "KernelMainloop" : "Mainloop"),
      fmt::arg(
          "entry",
          sm90_gemm_entry_text(
              c.copies == 2 ? ", int copies, int slices" : "",
              fmt::format(fmt::runtime(c.copies == 2 ? "{{{{{}}}, copies, slices}}" : "{{{}}}"),
                          fmt::format("A, stride_a, B, stride_b{}",
                                      c.promote > 0 ? ", static_cast<uint32_t>(promote)" : "")))),
      fmt::arg("release", kCutlassReleaseText), fmt::arg("tm", c.tile_m), fmt::arg("tn", c.tile_n),
      fmt::arg("cm", c.cluster_m), fmt::arg("schedule", c.pingpong ? "ping-pong" : "cooperative"),
      fmt::arg("epilogue", c.pingpong ? "cutlass::epilogue::TmaWarpSpecialized"
                                      : "cutlass::epilogue::TmaWarpSpecializedCooperative"),
      fmt::arg("kernel", c.pingpong ? "cutlass::gemm::KernelTmaWarpSpecializedPingpong"
                                    : "cutlass::gemm::KernelTmaWarpSpecializedCooperative"));
}

namespace {

constexpr const char* kSource = R"(// Generated by kiln evolve for $PROBLEM; do not edit.
// Genome $HASH: $DESCRIBE
// 3xTF32 on sm90 tensor cores as one TF32 GEMM over 3k: A' = [Ab | Ab | As], B' = [Bb | Bs | Bb]
// (X = Xb + Xs, Xb rounded to TF32, Xs the exact remainder), written K-major by a split kernel;
// CUTLASS 3.x sm90 GEMM tile $TILE, cluster $CLUSTER x 1, $SCHEDULE, raster along $RASTER,
// swizzle $SWIZZLE, accumulators promoted every $PROMOTE wgmma (0: never); split-K $SPLIT_K (K slices as a batch, summed in a fixed order); A $A_LAYOUT,
// B $B_LAYOUT.
$TRIANGLE_NOTE#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kiln/candidate.h"

$UNIT
extern "C" __attribute__((visibility("hidden"))) int kiln_sm90_tf32_gemm(
    const float* A, const float* B, float* D, int m, int n, int k, int batch, long long lda,
    long long ldb, long long ldd, long long batch_a, long long batch_b, long long batch_d,
    int raster_n, int swizzle, int promote, void* stream$COPIES_PARAMETER);

$SPLIT_HELPERS
// One element of the operand, written to its `copies` blocks of the K-major row: three, the
// big part in two and the remainder in block `small_block` (A: 2, B: 1); or two, [big | small]
// (small_block 1); or one, the element itself (A staged for a split in registers). Padding
// columns (c >= k) are zeros.
__device__ __forceinline__ void put3(float* row, long long kp, long long c, float v,
                                     int small_block, int copies) {
  if (copies == 1) {  // A kept whole for a split in registers: staged K-major only
    row[c] = v;
    return;
  }
  const float big = tf32_big(v);
  const float small = v - big;
  row[c] = small_block == 0 ? small : big;
  row[kp + c] = small_block == 1 ? small : big;
  if (copies == 3) row[2 * kp + c] = small_block == 2 ? small : big;
}

// Source with the rows contiguous (element (r, c) at src[c * rows + r]): a tile of 128 columns
// x 32 rows through shared memory, read as 128-byte runs of a source column and written as
// 512-byte runs of each of the three blocks of a row; the tiles along a row are neighbouring
// blocks (x), so the rows' writes meet in time. Written element by element: any shape, any
// alignment. On one H200 the 32 x 32 form (blocks along the rows first, 128-byte writes) and a
// 32 x 128 form in 16-byte vectors both ran at 51-61% of the DRAM peak (92-97 us of kb1-1's
// 1150; 1392-1458 us of kb1-3's 3800), where the K-contiguous split reaches 73-79%.
__global__ void __launch_bounds__(256) split_rows_contiguous(
    const float* __restrict__ src, float* __restrict__ dst, long long rows, long long k,
    long long kp, long long dst_rows, int small_block, int copies = 3) {
  constexpr int kTileC = 128, kTileR = 32;
  __shared__ float tile[kTileC][kTileR + 1];  // + 1: the column-wise reads below conflict-free
  const long long c0 = static_cast<long long>(blockIdx.x) * kTileC;
  const float* s = src + static_cast<long long>(blockIdx.z) * rows * k;
  float* d = dst + static_cast<long long>(blockIdx.z) * dst_rows * copies * kp;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Row tiles with a grid stride: gridDim.y stops at 65535 (2M rows).
  for (long long r0 = static_cast<long long>(blockIdx.y) * kTileR; r0 < rows;
       r0 += static_cast<long long>(gridDim.y) * kTileR) {
    float v[kTileC / 8];  // warp w: columns w, w + 8, ...; lane: the row
#pragma unroll
    for (int i = 0; i < kTileC / 8; ++i) {
      const long long c = c0 + warp + 8 * i, r = r0 + lane;
      v[i] = c < k && r < rows ? __ldg(s + c * rows + r) : 0.0f;
    }
    __syncthreads();  // the previous row tile's reads of `tile` are done
#pragma unroll
    for (int i = 0; i < kTileC / 8; ++i) tile[warp + 8 * i][lane] = v[i];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kTileR / 8; ++j) {  // warp w: rows w, w + 8, ...; lane: the columns
      const int tr = warp + 8 * j;
      const long long r = r0 + tr;
      if (r >= rows) continue;
      float* row = d + r * copies * kp;
#pragma unroll
      for (int q = 0; q < kTileC / 32; ++q) {
        const int tc = lane + 32 * q;
        if (c0 + tc < kp) put3(row, kp, c0 + tc, tile[tc][tr], small_block, copies);
      }
    }
  }
}

// The same blocks for four consecutive elements (c a multiple of 4; kp is one).
__device__ __forceinline__ void put3x4(float* row, long long kp, long long c, float4 v,
                                       int small_block, int copies) {
  if (copies == 1) {
    *reinterpret_cast<float4*>(row + c) = v;
    return;
  }
  const float4 big = make_float4(tf32_big(v.x), tf32_big(v.y), tf32_big(v.z), tf32_big(v.w));
  const float4 small = make_float4(v.x - big.x, v.y - big.y, v.z - big.z, v.w - big.w);
  *reinterpret_cast<float4*>(row + c) = small_block == 0 ? small : big;
  *reinterpret_cast<float4*>(row + kp + c) = small_block == 1 ? small : big;
  if (copies == 3) *reinterpret_cast<float4*>(row + 2 * kp + c) = small_block == 2 ? small : big;
}

// Source with K contiguous (element (r, c) at src[r * k + c]): four consecutive columns of
// kSplitRows rows a thread (x: columns, y: rows with a grid stride, z: batch; dst_rows rows of
// 3 kp a batch in the output), every load before any store; read as 16-byte vectors where the
// rows allow (`aligned`: k % 4 == 0, src 16-byte aligned), else element by element; written as
// vectors (kp is a multiple of 4). On one H200 the element-per-thread form moved its bytes at
// 65% of the DRAM peak (77 us of kb1-1's 1152), this one at 73-79%. With `band` > 0 (a
// multiple of 4; a triangle's ranged GEMM, whose tiles of band rows read only their K range)
// row r keeps the columns from its block's first on (band_from) or up to its block's last,
// the block being r / band; the others are neither read nor written.
constexpr int kSplitRows = 4;
__global__ void split_k_contiguous(const float* __restrict__ src, float* __restrict__ dst,
                                   long long rows, long long k, long long kp, long long dst_rows,
                                   int small_block, bool aligned, int copies = 3,
                                   long long band = 0, bool band_from = true) {
  const long long c = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (c >= kp) return;
  const float* s = src + static_cast<long long>(blockIdx.z) * rows * k;
  float* d = dst + static_cast<long long>(blockIdx.z) * dst_rows * copies * kp;
  for (long long r0 = static_cast<long long>(blockIdx.y) * kSplitRows; r0 < rows;
       r0 += static_cast<long long>(gridDim.y) * kSplitRows) {
    if (band > 0 && (band_from ? c < r0 / band * band : c >= (r0 / band + 1) * band)) continue;
    float4 v[kSplitRows];
#pragma unroll
    for (int j = 0; j < kSplitRows; ++j) {
      const float* x = s + (r0 + j) * k;
      if (r0 + j >= rows || c >= k)
        v[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      else if (aligned)
        v[j] = __ldg(reinterpret_cast<const float4*>(x + c));
      else
        v[j] = make_float4(__ldg(x + c), c + 1 < k ? __ldg(x + c + 1) : 0.0f,
                           c + 2 < k ? __ldg(x + c + 2) : 0.0f, c + 3 < k ? __ldg(x + c + 3) : 0.0f);
    }
#pragma unroll
    for (int j = 0; j < kSplitRows; ++j)
      if (r0 + j < rows) put3x4(d + (r0 + j) * copies * kp, kp, c, v[j], small_block, copies);
  }
}

// C (batch x m x n, row-major) = the sum over `splits` slices of `part` (rows of np floats, np a
// multiple of 4, 16-byte aligned), in slice order. Four consecutive columns a thread: the slices'
// 16-byte vectors loaded before they are added; stored as one vector where C's row allows it,
// else element by element (n not a multiple of 4: kb1-8's 5921 columns). The scalar form ran
// at 35-37% of the DRAM peak on one H200 (51 us of kb1-2's 1294, 207 of kb1-8's 2673).
__global__ void sum_slices(const float* __restrict__ part, float* __restrict__ C, long long m,
                           long long n, long long np, int splits) {
  const long long c = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (c >= n) return;  // c + 3 < np: the vectors lie in part's rows
  const long long z = blockIdx.z;
  for (long long r = blockIdx.y; r < m; r += gridDim.y) {
    float4 sum = __ldg(reinterpret_cast<const float4*>(part + ((z * splits) * m + r) * np + c));
    for (int s = 1; s < splits; ++s) {
      const float4 p =
          __ldg(reinterpret_cast<const float4*>(part + ((z * splits + s) * m + r) * np + c));
      sum = make_float4(sum.x + p.x, sum.y + p.y, sum.z + p.z, sum.w + p.w);
    }
    float* out = C + (z * m + r) * n + c;
    if (c + 4 <= n && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
      *reinterpret_cast<float4*>(out) = sum;
    } else {
      out[0] = sum.x;
      if (c + 1 < n) out[1] = sum.y;
      if (c + 2 < n) out[2] = sum.z;
      if (c + 3 < n) out[3] = sum.w;
    }
  }
}

$ENTRY  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  // With plain accumulation a slice is at most $MAX_SLICE deep (0: no bound): wgmma truncates as
  // it accumulates, and over 3k = 24576 positive terms that came to 1.3e-4 (rejected), over
  // 12288 within 1e-4 (H100, 2026-11-25). A single product gets as many slices as that needs.
  constexpr long long kMaxSlice = $MAX_SLICE;
  constexpr long long kDivisor = kMaxSlice > 0 ? kMaxSlice : 1;  // no division by a literal 0
  long long want = batch > 1 ? 1 : $SPLIT_K;
  const long long deep = kMaxSlice > 0 && batch == 1 ? (3 * k + kDivisor - 1) / kDivisor : 1;
  if (deep > want) want = deep;
  // A split in registers pads K to whole 32-deep k-tiles of every slice: on a thin K, fewer
  // slices rather than padding beyond a sixteenth of K (split-K 16 of K = 64 would be 8x the
  // work; the two-copy path falls back to three copies instead).
  const auto pad_of = [&](long long s) { return (k + 32 * s - 1) / (32 * s) * (32 * s) - k; };
  while ($COPIES == 1 && want > deep && pad_of(want) > (k / 16 > 31 ? k / 16 : 31)) --want;
  if (want > 4096) return 3;
  const int splits = static_cast<int>(want);
  // A triangle's ranged GEMM (its scheduler gives each tile its K range of the one product):
  // square, one batch, K in one slice; other shapes are refused (3).
  constexpr bool kTriangleRanges = $TRIANGLE_RANGES;
  if (kTriangleRanges && (batch != 1 || splits != 1 || m != n || k != m)) return 3;
  // Two copies of each operand ([Xb | Xs], read by the GEMM in three k-phases of kp) where the
  // unit is built for them, else three ([Ab | Ab | As], [Bb | Bs | Bb]). K padded so that each of
  // the `splits` slices of 3 kp is whole 16-byte vectors (TMA's stride rule), and for two copies
  // so that a phase and a slice are whole 32-deep k-tiles; the padding is zeros in both operands.
  // Two copies only where that padding stays small (split-K of a thin K would multiply it).
  const long long kp2 = (k + 32 * splits - 1) / (32 * splits) * (32 * splits);
  // copies 1: one operand R (A, or B where the GEMM computes C^T = B^T A^T) is split in
  // registers and read as stored where TMA can (rows of whole 16-byte vectors along its
  // contiguous side, a 16-byte aligned base, no K slice reaching past K into the next row), else
  // staged whole in its own layout (zero-padded to kp along K); the other, S, as two copies.
  constexpr bool kRegisterSplit = $COPIES == 1;
  constexpr bool kRegisterB = $REGISTER_B;
  constexpr bool kRegisterMnMajor = $REGISTER_MN_MAJOR;  // R stored with its rows contiguous
  // S read as stored too (or one raw K-major copy of it) and split in shared memory by the GEMM's
  // consumers: no operand split in memory.
  constexpr bool kSharedSplit = $SHARED_SPLIT;
  const int copies =
      kRegisterSplit || ($COPIES == 2 && kp2 - k <= (k / 16 > 31 ? k / 16 : 31)) ? 2 : 3;
  const long long k_align = copies == 2 ? 32 * splits : 4 * splits;
  const long long kp = (k + k_align - 1) / k_align * k_align;
  const long long slice = 3 * kp / splits;
  const long long row = (kSharedSplit ? 1 : copies) * kp;  // a K-major row of A' or B' (or S')
  // The GEMM writes C itself when it can (one slice, rows of whole 16-byte vectors); else rows
  // of np floats into `part`, summed or compacted into C afterwards. Its N is np (TMA stores
  // whole 16-byte vectors): B' has np rows, the last np - n of them zeros.
  const long long np = (n + 3) / 4 * 4;
  const bool direct = splits == 1 && np == n && reinterpret_cast<std::uintptr_t>(C) % 16 == 0;
  const float* reg = kRegisterB ? B : A;
  const long long reg_rows = kRegisterB ? n : m;
  const long long reg_ld_stored = kRegisterMnMajor ? reg_rows : k;
  const bool reg_direct = kRegisterSplit && reg_ld_stored % 4 == 0 &&
                          reinterpret_cast<std::uintptr_t>(reg) % 16 == 0 &&
                          (splits == 1 || k == kp);
  // R as the GEMM reads it: its leading dimension, K extent and batch stride (staged: rows
  // padded to whole vectors where MN-major, K to kp).
  const long long reg_ld =
      reg_direct ? reg_ld_stored : (kRegisterMnMajor ? (reg_rows + 3) / 4 * 4 : kp);
  const long long reg_k = reg_direct ? k : kp;
  // CUTLASS wants an M/N-major operand's contiguous extent in whole 16-byte vectors: B staged
  // N-major is read as np rows (zeros past n), which the GEMM writes as C^T's rows n..np of the
  // partial buffer (direct is false when np > n). A staged M-major keeps m (D's rows): where m is
  // not a multiple of 4 the unit refuses the product (the candidate returns 5).
  const long long reg_extent = kRegisterB && kRegisterMnMajor && !reg_direct ? reg_ld : reg_rows;
  const long long reg_batch = kRegisterMnMajor ? reg_k * reg_ld : reg_rows * reg_ld;
  // The rows of B' (or of S's copies): B's padded to np where D is row-major (its N is np), A's
  // m where the GEMM writes C^T (its N is m; C^T's rows of n are the stored dimension).
  const long long b_rows = kRegisterSplit && kRegisterB ? m : np;
  if (kTriangleRanges && reg_extent != b_rows) return 3;  // the scheduler's tiles: T x T
  // S as the GEMM reads it with kSharedSplit: as stored where TMA can (K-major rows of whole
  // 16-byte vectors, a 16-byte aligned base, no padding rows, and K whole k-tiles of every slice
  // or read whole with R as stored: TMA zero-fills past K, never past a row into the next),
  // else one raw K-major copy (rows of kp, zeros past k).
  const float* s_src = kRegisterB ? A : B;
  const long long s_rows = kRegisterB ? m : n;
  const bool s_k_major = !(kRegisterB ? $A_ROWS_CONTIGUOUS : $B_ROWS_CONTIGUOUS);
  const bool s_direct = kSharedSplit && s_k_major && k % 4 == 0 &&
                        reinterpret_cast<std::uintptr_t>(s_src) % 16 == 0 && b_rows == s_rows &&
                        (k == kp || (splits == 1 && reg_direct));
  const size_t a_floats = static_cast<size_t>(
      kRegisterSplit ? (reg_direct ? 0 : batch * reg_batch) : batch * m * row);
  const size_t b_floats = static_cast<size_t>(s_direct ? 0 : batch * b_rows * row);
  const size_t part_floats = direct ? 0 : static_cast<size_t>(batch * splits * m * np);
  const size_t need = a_floats + b_floats + part_floats;
  float* workspace = nullptr;  // A' and B' (and the slices' partial sums)
  if (!split_workspace(need, &workspace)) return 6;
  float* a_cat = workspace;
  float* b_cat = workspace + a_floats;
  float* part = direct ? C : b_cat + b_floats;
  const unsigned int y_rows = 8192;
  // An operand's split: 16-byte vectors where the source's shape and address allow them (rows
  // of whole vectors, a 16-byte aligned base), else element by element. `rows` are the rows of
  // the K-major result (A: m, B: n), `dst_rows` its rows a batch.
  const auto split = [&](const float* src, float* dst, long long rows, long long dst_rows,
                         bool rows_contiguous, int small_block, int blocks, long long band = 0,
                         bool band_from = true) {
    const bool aligned = reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
    const unsigned int z = static_cast<unsigned int>(batch);
    if (rows_contiguous) {
      const long long tiles = (rows + 31) / 32;
      split_rows_contiguous<<<dim3(static_cast<unsigned int>((kp + 127) / 128),
                                   static_cast<unsigned int>(tiles < 65535 ? tiles : 65535), z),
                              256, 0, stream>>>(src, dst, rows, k, kp, dst_rows, small_block,
                                                blocks);
    }
    else {
      const long long groups = (rows + kSplitRows - 1) / kSplitRows;
      split_k_contiguous<<<dim3(static_cast<unsigned int>((kp / 4 + 255) / 256),
                                static_cast<unsigned int>(groups < 65535 ? groups : 65535), z),
                           256, 0, stream>>>(src, dst, rows, k, kp, dst_rows, small_block,
                                             aligned && k % 4 == 0, blocks, band, band_from);
    }
  };
  if (kRegisterSplit) {
    // R staged where it cannot be read as stored: K-major rows of kp, or (MN-major) K rows of
    // reg_ld, copied as they are with the rows from k to kp zeroed.
    if (!reg_direct && !kRegisterMnMajor) split(reg, a_cat, reg_rows, reg_rows, false, 0, 1);
    for (long long z = 0; !reg_direct && kRegisterMnMajor && z < batch; ++z) {
      float* to = a_cat + z * reg_batch;
      if (cudaMemcpy2DAsync(to, reg_ld * sizeof(float), reg + z * k * reg_rows,
                            reg_rows * sizeof(float), reg_rows * sizeof(float), k,
                            cudaMemcpyDeviceToDevice, stream) != cudaSuccess ||
          (kp > k && cudaMemset2DAsync(to + k * reg_ld, reg_ld * sizeof(float), 0,
                                       reg_ld * sizeof(float), kp - k, stream) != cudaSuccess) ||
          (reg_ld > reg_rows &&
           cudaMemset2DAsync(to + reg_rows, reg_ld * sizeof(float), 0,
                             (reg_ld - reg_rows) * sizeof(float), k, stream) != cudaSuccess))
        return 1;
    }
    // S' = [Sb | Ss] (kSharedSplit: S as stored): its rows, then b_rows - rows of zeros.
    if (!s_direct && b_rows > s_rows &&
        cudaMemset2DAsync(b_cat + s_rows * row, b_rows * row * sizeof(float), 0,
                          (b_rows - s_rows) * row * sizeof(float), batch, stream) != cudaSuccess)
      return 1;
    // A triangle's ranged GEMM reads S's rows (its N) only in their tiles' K ranges: split
    // where it is K-major, only those (a band of the scheduler's tile rows; S's block starts
    // the range or ends it).
    if (!s_direct)
      split(s_src, b_cat, s_rows, b_rows, kRegisterB ? $A_ROWS_CONTIGUOUS : $B_ROWS_CONTIGUOUS, 1,
            kSharedSplit ? 1 : 2, $TRIANGLE_BAND, $TRIANGLE_S_STARTS);
  } else {
    // A' = [Ab | Ab | As] (or [Ab | As]): m rows.
    split(A, a_cat, m, m, $A_ROWS_CONTIGUOUS, copies == 2 ? 1 : 2, copies);
    // B' = [Bb | Bs | Bb] (or [Bb | Bs]): n rows, then np - n rows of zeros.
    if (np > n && cudaMemset2DAsync(b_cat + n * row, np * row * sizeof(float), 0,
                                    (np - n) * row * sizeof(float), batch, stream) != cudaSuccess)
      return 1;
    split(B, b_cat, n, np, $B_ROWS_CONTIGUOUS, 1, copies);
  }
  if (cudaGetLastError() != cudaSuccess) return 1;
$GEMM_CALL  if (status != 0) return status;
  if (!direct)
    sum_slices<<<dim3(static_cast<unsigned int>(((n + 3) / 4 + 255) / 256),
                      static_cast<unsigned int>(m < y_rows ? m : y_rows),
                      static_cast<unsigned int>(batch)),
                 256, 0, stream>>>(part, C, m, n, np, splits);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

// The GEMM's call, copies 2 or 3: one slice of 3 kp per batch, or `splits` slices of one
// product as a batch.
constexpr const char* kPhasedGemmCall =
    R"(  // One slice of 3 kp per batch, or `splits` slices of one product as a batch.
  const long long ldd = direct ? n : np;
  const int status =
      batch > 1 ? kiln_sm90_tf32_gemm(a_cat, b_cat, part, static_cast<int>(m), static_cast<int>(np),
                                      static_cast<int>(3 * kp), static_cast<int>(batch), row, row,
                                      ldd, m * row, np * row, m * ldd, $RASTER_N, $SWIZZLE,
                                      $PROMOTE, stream$COPIES_BATCH_ARGUMENT)
                : kiln_sm90_tf32_gemm(a_cat, b_cat, part, static_cast<int>(m), static_cast<int>(np),
                                      static_cast<int>(slice), splits, row, row, ldd, slice, slice,
                                      m * ldd, $RASTER_N, $SWIZZLE, $PROMOTE,
                                      stream$COPIES_SLICES_ARGUMENT);
)";

// The GEMM's call, copies 1: K-tiles of the real K (kp / splits a slice, slices as the batch),
// B's small part kp / 32 k-tiles after its big part in each row of [Bb | Bs].
constexpr const char* kRegisterSplitGemmCall =
    R"(  // R (as stored, or staged) split in registers; one slice of K per batch, or `splits`
  // slices of kp / splits of one product as a batch; S's descriptor spans a slice's big part
  // and, kp further on, its small part (kSharedSplit: the slice of S as stored or of its raw
  // copy, no small part). The GEMM's M is R's rows and its N S's: C (rows of ldd) itself, or
  // C^T written column-major, which is the same memory.
  (void)slice;
  const float* s_gemm = s_direct ? s_src : b_cat;
  const long long s_ld = s_direct ? k : row;
  const long long s_batch = s_direct ? s_rows * k : b_rows * row;
  const long long ldd = direct ? n : np;
  const float* r_gemm = reg_direct ? reg : a_cat;
  const long long ks = kp / splits;
  const long long gemm_k = splits == 1 ? reg_k : ks;
  const long long reg_slice = kRegisterMnMajor ? ks * reg_ld : ks;  // between R's K slices
  const int small_tiles = kSharedSplit ? 0 : static_cast<int>(kp / 32);
  const int status =
      batch > 1 ? kiln_sm90_tf32_gemm(r_gemm, s_gemm, part, static_cast<int>(reg_extent),
                                      static_cast<int>(b_rows), static_cast<int>(gemm_k),
                                      static_cast<int>(batch), reg_ld, s_ld, ldd, reg_batch,
                                      s_batch, m * ldd, $RASTER_N, $SWIZZLE, $PROMOTE, stream,
                                      small_tiles,
                                      static_cast<int>(kSharedSplit ? gemm_k : 2 * kp))
                : kiln_sm90_tf32_gemm(r_gemm, s_gemm, part, static_cast<int>(reg_extent),
                                      static_cast<int>(b_rows), static_cast<int>(gemm_k), splits,
                                      reg_ld, s_ld, ldd, reg_slice, ks, m * ldd, $RASTER_N,
                                      $SWIZZLE, $PROMOTE, stream, small_tiles,
                                      static_cast<int>(kSharedSplit ? gemm_k : kp + ks));
)";

}  // namespace

std::string generate_sm90_matmul_candidate(const Genome& g, const std::string& problem,
                                           const MatmulKind& kind) {
  return generate_sm90_matmul_candidate(g, problem, kind, sm90_matmul_config_of(g));
}

std::string generate_sm90_matmul_candidate(const Genome& g, const std::string& problem,
                                           const MatmulKind& kind, Sm90MatmulConfig c) {
  KILN_REQUIRE(c.triangle == 0 || (kind.triangle != 0 && c.copies == 1 && c.split_k == 1),
               "sm90 candidate: a triangle's ranged GEMM needs a triangular problem, the register "
               "split and no split-K");
  // The register operand's layout is the problem's: A stored k x m, or B stored k x n, has its
  // rows contiguous.
  c.register_mn_major = c.copies == 1 && (c.register_b ? !kind.b_t : kind.a_t);
  std::string source = kSource;
  replace_all(source, "$UNIT", sm90_tf32_gemm_unit(c));
  replace_all(source, "$SPLIT_HELPERS", tf32_split_helpers());
  replace_all(source, "$GEMM_CALL", c.copies == 1 ? kRegisterSplitGemmCall : kPhasedGemmCall);
  replace_all(source, "$REGISTER_B", c.register_b ? "true" : "false");
  replace_all(source, "$REGISTER_MN_MAJOR", c.register_mn_major ? "true" : "false");
  replace_all(source, "$SHARED_SPLIT", c.shared_split > 0 ? "true" : "false");
  // k bounded so that 3 k (the concatenated K) fits CUTLASS's int extents.
  replace_all(source, "$ENTRY", matmul_entry_opening(kind, "700000000LL"));
  // A stored k x m (transposed) has its rows (m) contiguous; B stored k x n (not transposed)
  // has its rows of B' (n) contiguous.
  replace_all(source, "$A_ROWS_CONTIGUOUS", kind.a_t ? "true" : "false");
  replace_all(source, "$B_ROWS_CONTIGUOUS", kind.b_t ? "false" : "true");
  replace_all(source, "$PROBLEM", problem);
  replace_all(source, "$HASH", fmt::format("{:016x}", g.hash()));
  replace_all(source, "$DESCRIBE", g.describe());
  replace_all(source, "$TILE", fmt::format("{}x{}x32", c.tile_m, c.tile_n));
  replace_all(source, "$CLUSTER", std::to_string(c.cluster_m));
  replace_all(source, "$SCHEDULE", c.pingpong ? "ping-pong" : "cooperative");
  replace_all(source, "$RASTER_N", c.raster_n ? "1" : "0");
  replace_all(source, "$RASTER", c.raster_n ? "N" : "M");
  replace_all(source, "$SWIZZLE", std::to_string(c.swizzle));
  replace_all(source, "$SPLIT_K", std::to_string(c.split_k));
  replace_all(source, "$PROMOTE", std::to_string(c.promote));
  replace_all(source, "$COPIES_PARAMETER",
              c.copies == 2   ? ", int copies, int slices"
              : c.copies == 1 ? ", int b_small_tiles, int b_k"
                              : "");
  // A batch of products (slices 1), or one product's `splits` K slices.
  replace_all(source, "$COPIES_BATCH_ARGUMENT", c.copies == 2 ? ", copies, 1" : "");
  replace_all(source, "$COPIES_SLICES_ARGUMENT", c.copies == 2 ? ", copies, splits" : "");
  replace_all(source, "$COPIES", std::to_string(c.copies));
  replace_all(source, "$MAX_SLICE", c.promote > 0 ? "0LL" : "12288LL");
  replace_all(source, "$A_LAYOUT", kind.a_t ? "stored k x m" : "m x k");
  replace_all(source, "$B_LAYOUT", kind.b_t ? "stored n x k" : "k x n");
  replace_all(source, "$TRIANGLE_RANGES", c.triangle ? "true" : "false");
  // S is the GEMM's N side: its block starts a tile's K range where the range runs from N's
  // block to M's (triangle 2).
  replace_all(source, "$TRIANGLE_BAND", c.triangle ? std::to_string(c.tile_n) + "LL" : "0LL");
  replace_all(source, "$TRIANGLE_S_STARTS", c.triangle == 2 ? "true" : "false");
  replace_all(source, "$TRIANGLE_NOTE",
              c.triangle
                  ? fmt::format("// Triangular operands ({}): the GEMM's tile scheduler gives "
                                "each output tile only the K range where\n// both operands "
                                "are non-zero, the longest first; the tiles off the triangle "
                                "are written as zeros.\n",
                                kind.triangle == 'U' ? "upper" : "lower")
                  : "");
  return source;
}

}  // namespace kiln::evolve
