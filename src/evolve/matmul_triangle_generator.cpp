// Triangular products by a grouped GEMM of the triangle's blocks (see
// matmul_triangle_generator.hpp).
#include "evolve/matmul_triangle_generator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "evolve/matmul_sm90_generator.hpp"
#include "evolve/source_text.hpp"

namespace kiln::evolve {
namespace {

// The configuration of a triangle genome: the sm90 knobs, tiles no larger than a block, plain
// accumulation (the grouped main loop has no promotion; slices keep K short instead).
Sm90MatmulConfig triangle_config_of(const Genome& g) {
  // Three copies: the triangle's operands are laid out K block by K block ([Ab | Ab | As] per
  // block) for a grouped GEMM, which has no phased or register-split main loop (yet); set before
  // the configuration is read, whose tile bounds depend on the copies.
  Genome three = g;
  three.knobs["cutlass-sm90.copies"] = 3;
  Sm90MatmulConfig c = sm90_matmul_config_of(three);
  const int block = g.knob("exploit-structure", "block");
  c.tile_m = std::min(c.tile_m, block);
  c.tile_n = std::min(c.tile_n, block);
  if (!c.pingpong) c.tile_m = std::max(c.tile_m, 128);  // cooperative: 64 rows a warp group
  c.promote = 0;
  c.split_k = 1;
  return c;
}

// The ranged form's configuration (matmul_triangle_scheduler.hpp): the genome's sm90 knobs with
// the register split (copies 1), the cooperative kernel with square tiles of 128 (CUTLASS 4.2's
// ping-pong kernel never asks the scheduler for a tile's K range: every tile would run all of
// K, 6-7x slower in 2026-11-30g's call 2, and read the columns a banded split leaves
// unwritten), one block a cluster (a peer's multicast tiles would be of another K range), no
// split-K and plain accumulation (a tile's range is of the one product, at most K = 4096 deep
// at 3 x K terms: the candidate refuses deeper ones), the transform warp (shared_split 2)
// replaced by the consumers' split (1).
Sm90MatmulConfig ranged_config_of(const Genome& g, const MatmulKind& kind) {
  Genome one = g;
  one.knobs["cutlass-sm90.copies"] = 1;
  Sm90MatmulConfig c = sm90_matmul_config_of(one);
  c.pingpong = false;
  c.tile_m = c.tile_n = 128;
  c.cluster_m = 1;
  c.swizzle = 1;  // CUTLASS rounds the tile counts up to the swizzle: the scheduler's T x T exact
  c.split_k = 1;
  c.promote = 0;
  c.shared_split = std::min(c.shared_split, 1);
  // The K range starts on the side of the row index i for an upper product (k from i to j) and
  // of the column index j for a lower one; the register split of B computes C^T (rows j).
  c.triangle = (kind.triangle == 'U') != c.register_b ? 1 : 2;
  return c;
}

}  // namespace

std::string sm90_tf32_grouped_unit(const Genome& genome) {
  const Sm90MatmulConfig c = triangle_config_of(genome);
  return fmt::format(
      R"(// kiln-unit: begin
// CUTLASS 3.x sm90 grouped GEMM on TF32 tensor cores: tile {tm}x{tn}x32, cluster {cm}x1, {schedule}.
// For each group g: D_g (row-major) = A_g (K-major) B_g^T (B_g stored n x k, K-major), fp32 in
// and out, shapes, pointers and leading dimensions per group. Built once per configuration.
{release}#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"

namespace kiln_grouped {{
using Shapes = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;
using Tile = cute::Shape<cute::Int<{tm}>, cute::Int<{tn}>, cute::Int<32>>;
using Cluster = cute::Shape<cute::Int<{cm}>, cute::_1, cute::_1>;
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor*,
    4, float, cutlass::layout::RowMajor*, 4, {epilogue}>::CollectiveOp;
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, cutlass::layout::RowMajor*, 4,
    float, cutlass::layout::ColumnMajor*, 4, float, Tile, Cluster,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
        sizeof(typename Epilogue::SharedStorage))>,
    {kernel}>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<Shapes, Mainloop, Epilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
using StrideA = typename Kernel::InternalStrideA;
using StrideB = typename Kernel::InternalStrideB;
using StrideD = typename Kernel::InternalStrideD;
using Shape3 = typename Shapes::UnderlyingProblemShape;

// The groups' arguments as the kernel reads them, in one device buffer uploaded only when they
// change (the same call repeats with the same groups; a new output pointer changes them).
struct Table {{
  std::vector<unsigned char> host;  // what the device buffer holds
  std::vector<Shape3> shapes;       // the host copy of the shapes (the scheduler's)
  void* device = nullptr;
  size_t device_bytes = 0;
}};

// What the call keeps between calls, its device buffers freed when the library is unloaded (a
// destructor of a function-local static runs at dlclose): a judge server loads candidate after
// candidate into one process, and its leak check ends a server that holds memory after one.
struct Kept {{
  int sms = 0;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  Table table;
  ~Kept() {{
    if (workspace != nullptr) cudaFree(workspace);
    if (table.device != nullptr) cudaFree(table.device);
  }}
}};

template <class T>
size_t place(std::vector<unsigned char>& bytes, const T* values, int count) {{
  const size_t at = (bytes.size() + 15) / 16 * 16;
  bytes.resize(at + sizeof(T) * static_cast<size_t>(count));
  std::memcpy(bytes.data() + at, values, sizeof(T) * static_cast<size_t>(count));
  return at;
}}
}}  // namespace kiln_grouped

// 0 on success, else the step that failed: 5 CUTLASS cannot run it, 6 memory, 7 initialise,
// 8 launch.
extern "C" __attribute__((visibility("hidden"))) int kiln_sm90_tf32_grouped_gemm(
    int groups, const int* mnk, const float* const* a, const float* const* b, float* const* d,
    const long long* lda, const long long* ldb, const long long* ldd, int raster_n, int swizzle,
    void* stream) {{
  using namespace kiln_grouped;
  static Kept kept;
  int& sms = kept.sms;
  void*& workspace = kept.workspace;
  size_t& workspace_bytes = kept.workspace_bytes;
  Table& table = kept.table;
  if (groups <= 0) return 5;
  if (sms == 0) {{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return 5;
    sms = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
  }}
  std::vector<Shape3> shapes(static_cast<size_t>(groups));
  std::vector<StrideA> sa(static_cast<size_t>(groups));
  std::vector<StrideB> sb(static_cast<size_t>(groups));
  std::vector<StrideD> sd(static_cast<size_t>(groups));
  for (int g = 0; g < groups; ++g) {{
    shapes[g] = Shape3{{mnk[3 * g], mnk[3 * g + 1], mnk[3 * g + 2]}};
    cute::get<0>(sa[g]) = lda[g];
    cute::get<0>(sb[g]) = ldb[g];
    cute::get<0>(sd[g]) = ldd[g];
  }}
  std::vector<unsigned char> bytes;
  const size_t at_shapes = place(bytes, shapes.data(), groups);
  const size_t at_a = place(bytes, a, groups);
  const size_t at_b = place(bytes, b, groups);
  const size_t at_d = place(bytes, d, groups);
  const size_t at_sa = place(bytes, sa.data(), groups);
  const size_t at_sb = place(bytes, sb.data(), groups);
  const size_t at_sd = place(bytes, sd.data(), groups);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (bytes != table.host) {{
    if (bytes.size() > table.device_bytes) {{
      cudaFree(table.device);
      table.device = nullptr;
      table.device_bytes = 0;
      if (cudaMalloc(&table.device, bytes.size()) != cudaSuccess) return 6;
      table.device_bytes = bytes.size();
    }}
    // From pageable memory: the bytes are staged before the call returns, so the next call may
    // rebuild them while this copy waits in the stream.
    if (cudaMemcpyAsync(table.device, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, s) !=
        cudaSuccess)
      return 6;
    table.host = bytes;
    table.shapes = shapes;
  }}
  unsigned char* base = static_cast<unsigned char*>(table.device);
  cutlass::KernelHardwareInfo hw;
  hw.sm_count = sms;
  (void)cudaGetDevice(&hw.device_id);
  typename Gemm::Arguments args;
  args.mode = cutlass::gemm::GemmUniversalMode::kGrouped;
  args.problem_shape = {{groups, reinterpret_cast<Shape3*>(base + at_shapes),
                        table.shapes.data()}};
  args.mainloop = {{reinterpret_cast<const float**>(base + at_a),
                   reinterpret_cast<StrideA*>(base + at_sa),
                   reinterpret_cast<const float**>(base + at_b),
                   reinterpret_cast<StrideB*>(base + at_sb)}};
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = nullptr;
  args.epilogue.ptr_D = reinterpret_cast<float**>(base + at_d);
  args.epilogue.dD = reinterpret_cast<StrideD*>(base + at_sd);
  args.hw_info = hw;
  args.scheduler.max_swizzle_size = swizzle;
  using Raster = typename Kernel::TileScheduler::RasterOrderOptions;
  args.scheduler.raster_order = raster_n ? Raster::AlongN : Raster::AlongM;
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return 5;
  const size_t need = Gemm::get_workspace_size(args);
  if (need > workspace_bytes) {{
    cudaFree(workspace);
    workspace = nullptr;
    workspace_bytes = 0;
    if (cudaMalloc(&workspace, need) != cudaSuccess) return 6;
    workspace_bytes = need;
  }}
  if (gemm.initialize(args, workspace, s) != cutlass::Status::kSuccess) return 7;
  if (gemm.run(s) != cutlass::Status::kSuccess) return 8;
  return 0;
}}
// kiln-unit: end
)",
      fmt::arg("release", kCutlassReleaseText), fmt::arg("tm", c.tile_m), fmt::arg("tn", c.tile_n),
      fmt::arg("cm", c.cluster_m), fmt::arg("schedule", c.pingpong ? "ping-pong" : "cooperative"),
      fmt::arg("epilogue", c.pingpong ? "cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong"
                                      : "cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative"),
      fmt::arg("kernel", c.pingpong
                             ? "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong"
                             : "cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative"));
}

namespace {

constexpr const char* kSource = R"(// Generated by kiln evolve for $PROBLEM; do not edit.
// Genome $HASH: $DESCRIBE
// Triangular product ($TRIANGLE): A and B $TRIANGLE triangular, so C = A B is too and block (I, J)
// of the triangle sums only the K blocks between I and J. One CUTLASS 3.x sm90 grouped GEMM
// (tile $TILE, cluster $CLUSTER x 1, $SCHEDULE, raster along $RASTER, swizzle $SWIZZLE) over the
// triangle's blocks of $BLOCK x $BLOCK ($GROUP_BLOCKS of a row a group), on 3xTF32 operands laid
// out K block by K block (A' = [Ab | Ab | As], B' = [Bb | Bs | Bb] per block of $BLOCK columns,
// both K-major), a group's K range cut into slices of at most $SLICE_BLOCKS blocks (summed after
// in slice order). The split kernels write only the operand blocks the GEMM reads, and the zeros
// off the triangle.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/candidate.h"

$UNIT
extern "C" __attribute__((visibility("hidden"))) int kiln_sm90_tf32_grouped_gemm(
    int groups, const int* mnk, const float* const* a, const float* const* b, float* const* d,
    const long long* lda, const long long* ldb, const long long* ldd, int raster_n, int swizzle,
    void* stream);

constexpr long long kBlock = $BLOCK;
constexpr bool kUpper = $UPPER;
// Column blocks a group covers in one row of blocks, from the diagonal outwards: one K range
// for all of them (the widest one's), so the narrower columns add terms whose B block is zero.
constexpr long long kGroupBlocks = $GROUP_BLOCKS;
// Plain wgmma accumulation truncates as it goes: a group's K (3 x blocks x kBlock) stays within
// the 12288 terms measured accurate (H100, 2026-11-25).
constexpr long long kMaxTerms = 12288;

$SPLIT_HELPERS

// Whether the operand block (row block R, K block L) is ever read: A's rows are the output's
// rows (upper: K blocks from R on), B's rows the output's columns (upper: K blocks up to R, and
// up to kGroupBlocks - 1 further where a group's K range is its widest column's: zeros of B).
__device__ __forceinline__ bool a_block_read(long long r_block, long long l_block) {
  return kUpper ? l_block >= r_block : l_block <= r_block;
}
__device__ __forceinline__ bool b_block_read(long long j_block, long long l_block) {
  return kUpper ? l_block <= j_block + (kGroupBlocks - 1) : l_block >= j_block - (kGroupBlocks - 1);
}

// Element (row, c) of an operand into its K-major row of 3 np: in K block c / kBlock, the big
// part in two of the three sub-blocks and the remainder in `small_piece` (A: 2, B: 1).
__device__ __forceinline__ void put3(float* row, long long c, float v, int small_piece) {
  const float big = tf32_big(v);
  const float small = v - big;
  float* at = row + (c / kBlock) * 3 * kBlock + c % kBlock;
  at[0] = small_piece == 0 ? small : big;
  at[kBlock] = small_piece == 1 ? small : big;
  at[2 * kBlock] = small_piece == 2 ? small : big;
}

// The same for four consecutive elements c .. c + 3 (c a multiple of 4: one K block).
__device__ __forceinline__ void put3x4(float* row, long long c, float4 v, int small_piece) {
  const float4 big = make_float4(tf32_big(v.x), tf32_big(v.y), tf32_big(v.z), tf32_big(v.w));
  const float4 small = make_float4(v.x - big.x, v.y - big.y, v.z - big.z, v.w - big.w);
  float* at = row + (c / kBlock) * 3 * kBlock + c % kBlock;
  *reinterpret_cast<float4*>(at) = small_piece == 0 ? small : big;
  *reinterpret_cast<float4*>(at + kBlock) = small_piece == 1 ? small : big;
  *reinterpret_cast<float4*>(at + 2 * kBlock) = small_piece == 2 ? small : big;
}

// A (n x n, K contiguous) -> A' (np rows of 3 np), the read blocks only; padding is zeros.
// A's blocks that are never read are exactly the product's blocks off the triangle (row block
// I, K block L: upper, L < I), so the same pass writes those zeros into the target (ld ldt, a
// multiple of 4, 16-byte aligned). Four consecutive columns a thread, read as one 16-byte
// vector where A's rows allow (`aligned`: n % 4 == 0 and A 16-byte aligned); the scalar form
// ran at 55% of the DRAM peak on one H200 (55 us of kb1-14's 432).
__global__ void split_a(const float* __restrict__ A, float* __restrict__ a3, long long n,
                        long long np, float* __restrict__ target, long long ldt, bool aligned) {
  const long long c = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (c >= np) return;
  for (long long r = blockIdx.y; r < np; r += gridDim.y) {
    if (!a_block_read(r / kBlock, c / kBlock)) {
      *reinterpret_cast<float4*>(target + r * ldt + c) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      continue;
    }
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (aligned && r < n && c < n) {
      v = __ldg(reinterpret_cast<const float4*>(A + r * n + c));
    } else if (r < n) {
      const float* a = A + r * n;
      v = make_float4(c < n ? a[c] : 0.0f, c + 1 < n ? a[c + 1] : 0.0f, c + 2 < n ? a[c + 2] : 0.0f,
                      c + 3 < n ? a[c + 3] : 0.0f);
    }
    put3x4(a3 + r * 3 * np, c, v, 2);
  }
}

// B (n x n, k x j, j contiguous) -> B' (np rows j of 3 np, K-major), the read blocks only,
// through a tile of 128 K columns x 32 rows j: read as 128-byte runs of B's rows, written as
// 512-byte runs of B' rows, the tiles along a B' row as neighbouring blocks (the form of the
// plain sm90 path's transposing split, which lifted kb1-16 from U 0.637 to 0.682 on one H200;
// the 32 x 32 form here ran at 49-51% of the DRAM peak). kBlock is a multiple of 128: a tile
// lies in one block.
__global__ void __launch_bounds__(256) split_b(const float* __restrict__ B,
                                               float* __restrict__ b3, long long n, long long np) {
  static_assert(kBlock % 128 == 0, "a tile of 128 K columns must lie in one block");
  constexpr int kTileK = 128, kTileJ = 32;
  __shared__ float tile[kTileK][kTileJ + 1];  // + 1: the column-wise reads conflict-free
  const long long k0 = static_cast<long long>(blockIdx.x) * kTileK;
  const long long j0 = static_cast<long long>(blockIdx.y) * kTileJ;
  if (!b_block_read(j0 / kBlock, k0 / kBlock)) return;  // the whole thread block alike
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float v[kTileK / 8];  // warp w: K rows w, w + 8, ... of B; lane: the column j
#pragma unroll
  for (int i = 0; i < kTileK / 8; ++i) {
    const long long kk = k0 + warp + 8 * i, j = j0 + lane;
    v[i] = kk < n && j < n ? __ldg(B + kk * n + j) : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kTileK / 8; ++i) tile[warp + 8 * i][lane] = v[i];
  __syncthreads();
#pragma unroll
  for (int q = 0; q < kTileJ / 8; ++q) {  // warp w: B' rows w, w + 8, ...; lane: K columns
    const int tj = warp + 8 * q;
    float* row = b3 + (j0 + tj) * 3 * np;
#pragma unroll
    for (int p = 0; p < kTileK / 32; ++p) {
      const int tk = lane + 32 * p;
      put3(row, k0 + tk, tile[tk][tj], 1);
    }
  }
}

// Entry y of `sums` (row block, first column block, width in blocks, first part's unit, parts):
// the target's kBlock x width kBlock region += its parts (width units of kBlock^2 floats each),
// in slice order; four consecutive columns a thread (every offset here is a multiple of 4: the
// scalar form ran at 39% of the DRAM peak on one H200).
__global__ void add_slices(float* __restrict__ t, long long ldt, const float* __restrict__ parts,
                           const int* __restrict__ sums) {
  const int* s = sums + 5 * blockIdx.y;
  const long long width = s[2] * kBlock;
  const long long e = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (e >= kBlock * width) return;
  const long long r = e / width, c = e % width;
  float4* out = reinterpret_cast<float4*>(t + (s[0] * kBlock + r) * ldt + s[1] * kBlock + c);
  float4 v = *out;
  for (int q = 0; q < s[4]; ++q) {
    const float4 p = __ldg(reinterpret_cast<const float4*>(
        parts + (static_cast<long long>(s[3]) + static_cast<long long>(q) * s[2]) * kBlock * kBlock +
        e));
    v = make_float4(v.x + p.x, v.y + p.y, v.z + p.z, v.w + p.w);
  }
  *out = v;
}

// The padded target's n x n corner into C.
__global__ void copy_corner(const float* __restrict__ t, float* __restrict__ C, long long n,
                            long long np) {
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= n) return;
  for (long long r = blockIdx.y; r < n; r += gridDim.y) C[r * n + c] = t[r * np + c];
}

// One group of the grouped GEMM: output blocks (I, J .. J + w - 1), K blocks [lo, lo + len),
// written to the target (part < 0) or to the parts from unit `part` (w units of kBlock^2).
struct Group {
  int I, J, w, lo, len, part;
};

// The triangle's groups for nt blocks, the longest first (the persistent CTAs take tiles in
// order, so the long ones start first), the sums of the sliced groups, and the parts' units.
static void plan(long long nt, long long slice_blocks, std::vector<Group>& groups,
                 std::vector<int>& sums, int& units) {
  groups.clear();
  sums.clear();
  units = 0;
  for (long long I = 0; I < nt; ++I) {
    // Columns from the diagonal outwards in runs of kGroupBlocks: upper to the right, lower to
    // the left; the K range is the run's widest column's.
    for (long long edge = I; kUpper ? edge < nt : edge >= 0;
         edge += kUpper ? kGroupBlocks : -kGroupBlocks) {
      const long long J0 = kUpper ? edge : std::max(edge - kGroupBlocks + 1, 0LL);
      const long long J1 = kUpper ? std::min(edge + kGroupBlocks - 1, nt - 1) : edge;
      const long long w = J1 - J0 + 1;
      const long long lo = kUpper ? I : J0, count = (kUpper ? J1 - I : I - J0) + 1;
      const long long slices = (count + slice_blocks - 1) / slice_blocks;
      const long long per = (count + slices - 1) / slices;
      int first = -1, extra = 0;
      for (long long from = 0, q = 0; from < count; from += per, ++q) {
        const long long len = std::min(per, count - from);
        Group g{static_cast<int>(I),         static_cast<int>(J0),  static_cast<int>(w),
                static_cast<int>(lo + from), static_cast<int>(len), -1};
        if (q > 0) {
          g.part = units;
          units += static_cast<int>(w);
          if (first < 0) first = g.part;
          ++extra;
        }
        groups.push_back(g);
      }
      if (extra > 0) {
        sums.push_back(static_cast<int>(I));
        sums.push_back(static_cast<int>(J0));
        sums.push_back(static_cast<int>(w));
        sums.push_back(first);
        sums.push_back(extra);
      }
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& x, const Group& y) { return x.len > y.len; });
}

// The slice sums table on the device, kept between calls (A', B', the padded target and the
// slices' parts live in split_workspace).
static int* sums_device = nullptr;
static std::vector<int> sums_uploaded;
// Freed when the library is unloaded (a judge server loads candidate after candidate).
__attribute__((destructor)) static void release_sums() {
  if (sums_device != nullptr) cudaFree(sums_device);
}

$ENTRY  cudaStream_t stream = static_cast<cudaStream_t>(a->stream);
  if (batch != 1 || m != n || n != k) return 3;
  if (3 * kBlock > kMaxTerms) return 4;
  long long slice_blocks = $SLICE_BLOCKS;
  while (slice_blocks > 1 && 3 * slice_blocks * kBlock > kMaxTerms) --slice_blocks;
  const long long nt = (n + kBlock - 1) / kBlock, np = nt * kBlock;
  static long long planned_nt = -1, planned_slices = -1;
  static std::vector<Group> groups;
  static std::vector<int> sums;
  static int units = 0;
  if (planned_nt != nt || planned_slices != slice_blocks) {
    plan(nt, slice_blocks, groups, sums, units);
    planned_nt = nt;
    planned_slices = slice_blocks;
  }
  // The GEMM writes C's blocks itself when C is the padded shape and 16-byte aligned (TMA).
  const bool direct = np == n && reinterpret_cast<std::uintptr_t>(C) % 16 == 0;
  const size_t a_floats = static_cast<size_t>(np * 3 * np);
  const size_t t_floats = direct ? 0 : static_cast<size_t>(np * np);
  const size_t need = 2 * a_floats + t_floats + static_cast<size_t>(units) * kBlock * kBlock;
  float* workspace = nullptr;
  if (!split_workspace(need, &workspace)) return 6;
  float* a3 = workspace;
  float* b3 = a3 + a_floats;
  float* target = direct ? C : b3 + a_floats;
  float* part = b3 + a_floats + t_floats;
  const long long ldt = direct ? n : np;
  if (sums != sums_uploaded) {
    cudaFree(sums_device);
    sums_device = nullptr;
    sums_uploaded.clear();
    if (!sums.empty()) {
      if (cudaMalloc(&sums_device, sums.size() * sizeof(int)) != cudaSuccess) return 6;
      if (cudaMemcpyAsync(sums_device, sums.data(), sums.size() * sizeof(int),
                          cudaMemcpyHostToDevice, stream) != cudaSuccess)
        return 6;
    }
    sums_uploaded = sums;
  }
  const unsigned int y_rows = static_cast<unsigned int>(np < 8192 ? np : 8192);
  // A' and, in the same pass, the zeros of the target's blocks off the triangle.
  const bool a_aligned = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(A) % 16 == 0;
  split_a<<<dim3(static_cast<unsigned int>((np / 4 + 255) / 256), y_rows), 256, 0, stream>>>(
      A, a3, n, np, target, ldt, a_aligned);
  split_b<<<dim3(static_cast<unsigned int>(np / 128), static_cast<unsigned int>(np / 32)), 256, 0,
            stream>>>(B, b3, n, np);
  if (cudaGetLastError() != cudaSuccess) return 1;
  const int count = static_cast<int>(groups.size());
  std::vector<int> mnk(3 * static_cast<size_t>(count));
  std::vector<const float*> ga(count), gb(count);
  std::vector<float*> gd(count);
  std::vector<long long> lda(count, 3 * np), ldb(count, 3 * np), ldd(count);
  for (int i = 0; i < count; ++i) {
    const Group& g = groups[i];
    mnk[3 * i] = static_cast<int>(kBlock);
    mnk[3 * i + 1] = static_cast<int>(g.w * kBlock);
    mnk[3 * i + 2] = static_cast<int>(3 * g.len * kBlock);
    ga[i] = a3 + g.I * kBlock * 3 * np + 3 * g.lo * kBlock;
    gb[i] = b3 + g.J * kBlock * 3 * np + 3 * g.lo * kBlock;
    gd[i] = g.part < 0 ? target + g.I * kBlock * ldt + g.J * kBlock
                       : part + static_cast<long long>(g.part) * kBlock * kBlock;
    ldd[i] = g.part < 0 ? ldt : g.w * kBlock;
  }
  const int status = kiln_sm90_tf32_grouped_gemm(count, mnk.data(), ga.data(), gb.data(),
                                                 gd.data(), lda.data(), ldb.data(), ldd.data(),
                                                 $RASTER_N, $SWIZZLE, stream);
  if (status != 0) return status;
  if (!sums.empty())
    add_slices<<<dim3(static_cast<unsigned int>((kBlock * kBlock * kGroupBlocks / 4 + 255) / 256),
                      static_cast<unsigned int>(sums.size() / 5)),
                 256, 0, stream>>>(target, ldt, part, sums_device);
  if (!direct)
    copy_corner<<<dim3(static_cast<unsigned int>((n + 255) / 256),
                       static_cast<unsigned int>(n < 8192 ? n : 8192)),
                  256, 0, stream>>>(target, C, n, np);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

}  // namespace

std::string generate_triangle_matmul_candidate(const Genome& g, const std::string& problem,
                                               const MatmulKind& kind) {
  if (kind.triangle != 'U' && kind.triangle != 'L')
    throw UsageError(fmt::format(
        "exploit-structure: {} has no triangular operands (kb1-14 and kb1-15 have)", problem));
  if (!g.has("cutlass-sm90") || !g.has("tf32x3") || !g.has("exploit-structure"))
    throw UsageError("exploit-structure: a triangle candidate needs cutlass-sm90 and tf32x3");
  if (g.knob("exploit-structure", "ranged") == 1)
    return generate_sm90_matmul_candidate(g, problem, kind, ranged_config_of(g, kind));
  const Sm90MatmulConfig c = triangle_config_of(g);
  std::string source = kSource;
  replace_all(source, "$UNIT", sm90_tf32_grouped_unit(g));
  replace_all(source, "$SPLIT_HELPERS", tf32_split_helpers());
  replace_all(source, "$ENTRY", matmul_entry_opening(kind, "700000000LL"));
  replace_all(source, "$PROBLEM", problem);
  replace_all(source, "$HASH", fmt::format("{:016x}", g.hash()));
  replace_all(source, "$DESCRIBE", g.describe());
  replace_all(source, "$TRIANGLE", kind.triangle == 'U' ? "upper" : "lower");
  replace_all(source, "$UPPER", kind.triangle == 'U' ? "true" : "false");
  replace_all(source, "$TILE", fmt::format("{}x{}x32", c.tile_m, c.tile_n));
  replace_all(source, "$CLUSTER", std::to_string(c.cluster_m));
  replace_all(source, "$SCHEDULE", c.pingpong ? "ping-pong" : "cooperative");
  replace_all(source, "$RASTER_N", c.raster_n ? "1" : "0");
  replace_all(source, "$RASTER", c.raster_n ? "N" : "M");
  replace_all(source, "$SWIZZLE", std::to_string(c.swizzle));
  replace_all(source, "$BLOCK", std::to_string(g.knob("exploit-structure", "block")));
  replace_all(source, "$GROUP_BLOCKS", std::to_string(g.knob("exploit-structure", "group_blocks")));
  replace_all(source, "$SLICE_BLOCKS", std::to_string(g.knob("exploit-structure", "slice_blocks")));
  return source;
}

}  // namespace kiln::evolve
