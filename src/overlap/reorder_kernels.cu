// Restore and RMSNorm kernels that read slot-ordered rows (see reorder_kernels.hpp). Each CTA
// handles kRowsPerCta consecutive rows of one tile row, so it looks the tiles' slots up once and
// steps from row to row by a fixed stride: with one CTA per row the dependent slot lookups before
// every load cost RMSNorm 8-16% over row-major input on H200 (run 9, goal 5%). 16-byte loads and
// stores (8 elements never straddle a tile: BN % 8 == 0).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/half_float.cuh"
#include "overlap/reorder_kernels.hpp"

namespace kiln::overlap {
namespace {

constexpr int kThreads = 256;
constexpr int kVector = 8;  // elements per 16-byte access
// Rows per CTA: divides every subtile height (>= 16 rows, slot_store_map.hpp).
constexpr int kRowsPerCta = 4;

// Where (local row, col) is read from; col a multiple of 8. The next row of the same tile row is
// `row_stride` elements further in both buffers.
struct Location {
  std::int64_t received = 0;  // in `source` and the addends (owners mode: in the owner's region)
  std::int64_t own = 0;       // in `own_slots`
  int owner = 0;              // owners mode: whose region holds the row
  __device__ void next_row(int row_stride) {
    received += row_stride;
    own += row_stride;
  }
};

__device__ __forceinline__ int row_stride(const ReorderSource& in, int n) {
  return in.slot_of_tile == nullptr ? n : in.geometry.tile_n;
}

__device__ __forceinline__ Location locate(const ReorderSource& in, int row, int col, int n) {
  Location at;
  if (in.slot_of_tile == nullptr) {
    at.received = static_cast<std::int64_t>(row) * n + col;
    return at;
  }
  const SlotGeometry& g = in.geometry;
  if (in.owners > 0) {
    // A global row: its tile row, then the subtile (owner) and row within it. The CTA's
    // kRowsPerCta rows share one subtile (subtiles are a multiple of kRowsPerCta rows).
    const int tm = row / g.tile_m;
    const int in_tile = row - tm * g.tile_m;
    const int slot = __ldg(in.slot_of_tile + tm * g.tiles_n + col / g.tile_n);
    at.owner = subtile_of_row(g, in_tile);
    at.received = received_offset(g, slot, row_in_subtile(g, in_tile), col % g.tile_n);
    return at;
  }
  const int tile_row = subtile_of_row(g, row);
  const int slot = __ldg(in.slot_of_tile + tile_row * g.tiles_n + col / g.tile_n);
  at.received = received_offset_of(g, slot, row, col);
  if (in.own_slots != nullptr && g.contiguous_rows) {
    // This rank's own tile (rank*tpr + tile_row, col / BN) in the slot buffer: its slot follows
    // from its column group (the tables are per tile column in this layout, slot_layout.hpp).
    const int tn = col / g.tile_n;
    const int group = __ldg(in.wave_group + tn);
    const int first = __ldg(in.group_first_slot + group);
    const int count = __ldg(in.group_slot_count + group);
    const int c0 = first / g.tiles_m;
    const int own_slot =
        contiguous_slot(g, in.rank * g.tiles_per_rank + tile_row, tn, c0, count / g.tiles_m);
    at.own = slot_offset(g, own_slot, first, count, row_in_subtile(g, row), col % g.tile_n);
  } else if (in.own_slots != nullptr) {
    const int group = __ldg(in.wave_group + slot / in.grid_ctas);
    const int row_in_tile = in.rank * g.rows_per_subtile() + row_in_subtile(g, row);
    at.own = slot_offset(g, slot, __ldg(in.group_first_slot + group),
                         __ldg(in.group_slot_count + group), row_in_tile, col % g.tile_n);
  }
  return at;
}

__device__ __forceinline__ bool plain_copy(const ReorderSource& in) {
  return in.owners > 0 || (in.addend_count == 0 && in.own_slots == nullptr);
}

// Where the plain copy reads: the row's owner region, or `source`.
template <typename T>
__device__ __forceinline__ const T* copy_base(const ReorderSource& in, const Location& at) {
  return static_cast<const T*>(in.owners > 0 ? in.owner_regions[at.owner] : in.source);
}

using core::from_float;
using core::to_float;

template <typename T>
__device__ __forceinline__ void add_vector(const void* base, std::int64_t offset,
                                           float (&x)[kVector]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(static_cast<const T*>(base) + offset);
  const T* values = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int e = 0; e < kVector; ++e) x[e] += to_float(values[e]);
}

// The 8 elements at `at`: source + addends + own subtile, in fp32.
template <typename T>
__device__ __forceinline__ void load_sum(const ReorderSource& in, const Location& at,
                                         float (&x)[kVector]) {
#pragma unroll
  for (int e = 0; e < kVector; ++e) x[e] = 0.0f;
  if (in.owners > 0) {
    add_vector<T>(in.owner_regions[at.owner], at.received, x);
    return;
  }
  if (in.source != nullptr) add_vector<T>(in.source, at.received, x);
  for (int a = 0; a < in.addend_count; ++a) add_vector<T>(in.addends[a], at.received, x);
  if (in.own_slots != nullptr) add_vector<T>(in.own_slots, at.own, x);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    restore_kernel(ReorderSource in, int rows, int n, T* out) {
  const int first_row = blockIdx.x * kRowsPerCta;
  const int last_row = min(first_row + kRowsPerCta, rows);
  const int stride = row_stride(in, n);
  for (int col = threadIdx.x * kVector; col < n; col += kThreads * kVector) {
    Location at = locate(in, first_row, col, n);
    const T* source = copy_base<T>(in, at);
    for (int row = first_row; row < last_row; ++row, at.next_row(stride)) {
      uint4 v;
      if (plain_copy(in)) {
        v = *reinterpret_cast<const uint4*>(source + at.received);
      } else {
        float x[kVector];
        load_sum<T>(in, at, x);
        T* y = reinterpret_cast<T*>(&v);
#pragma unroll
        for (int e = 0; e < kVector; ++e) y[e] = from_float<T>(x[e]);
      }
      *reinterpret_cast<uint4*>(out + static_cast<std::int64_t>(row) * n + col) = v;
    }
  }
}

// kVectorsPerThread x 8 elements of the row stay in registers between the two passes.
template <typename T, int kVectorsPerThread>
__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(ReorderSource in, int rows, int n, const T* weight, float eps, T* out) {
  const int first_row = blockIdx.x * kRowsPerCta;
  const int last_row = min(first_row + kRowsPerCta, rows);
  const int stride = row_stride(in, n);
  __shared__ float warp_sums[kRowsPerCta][kThreads / 32];
  Location at[kVectorsPerThread];
#pragma unroll
  for (int i = 0; i < kVectorsPerThread; ++i) {
    const int col = (i * kThreads + threadIdx.x) * kVector;
    if (col < n) at[i] = locate(in, first_row, col, n);
  }
#pragma unroll 1
  for (int row = first_row; row < last_row; ++row) {
    float x[kVectorsPerThread][kVector];
    float sum_squares = 0.0f;
#pragma unroll
    for (int i = 0; i < kVectorsPerThread; ++i) {
      const int col = (i * kThreads + threadIdx.x) * kVector;
      if (col < n) {
        load_sum<T>(in, at[i], x[i]);
        at[i].next_row(stride);
#pragma unroll
        for (int e = 0; e < kVector; ++e) {
          // A sum of bf16/fp16 partials is rounded to the output type before the norm, as the
          // collective's output would be.
          if (!plain_copy(in)) x[i][e] = to_float(from_float<T>(x[i][e]));
          sum_squares += x[i][e] * x[i][e];
        }
      }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      sum_squares += __shfl_xor_sync(0xffffffffu, sum_squares, offset);
    // One slot of partial sums per row: no second barrier before the next row overwrites them.
    float* sums = warp_sums[row - first_row];
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = sum_squares;
    __syncthreads();
    float total = 0.0f;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) total += sums[w];
    const float scale = rsqrtf(total / static_cast<float>(n) + eps);
#pragma unroll
    for (int i = 0; i < kVectorsPerThread; ++i) {
      const int col = (i * kThreads + threadIdx.x) * kVector;
      if (col < n) {
        const uint4 raw_weight = *reinterpret_cast<const uint4*>(weight + col);
        const T* w = reinterpret_cast<const T*>(&raw_weight);
        uint4 packed;
        T* y = reinterpret_cast<T*>(&packed);
#pragma unroll
        for (int e = 0; e < kVector; ++e) y[e] = from_float<T>(x[i][e] * scale * to_float(w[e]));
        *reinterpret_cast<uint4*>(out + static_cast<std::int64_t>(row) * n + col) = packed;
      }
    }
  }
}

int cta_count(int rows) {
  return (rows + kRowsPerCta - 1) / kRowsPerCta;
}

void check_arguments(const ReorderSource& in, core::DType dtype, int rows, int n,
                     const char* what) {
  if (in.owners < 0 || in.owners > ReorderSource::kMaxOwners ||
      (in.owners > 0 && in.slot_of_tile == nullptr)) {
    throw UsageError(std::string(what) + ": " + std::to_string(in.owners) +
                     " owner regions; accepted 0.." + std::to_string(ReorderSource::kMaxOwners) +
                     ", with a slot map");
  }
  if (in.addend_count < 0 || in.addend_count > ReorderSource::kMaxAddends) {
    throw UsageError(std::string(what) + ": " + std::to_string(in.addend_count) +
                     " addends; accepted 0.." + std::to_string(ReorderSource::kMaxAddends));
  }
  if (dtype != core::DType::kBf16 && dtype != core::DType::kFp16) {
    throw UsageError(std::string(what) + ": dtype " + core::dtype_name(dtype) +
                     " not supported; accepted bf16, fp16");
  }
  if (rows < 0 || n <= 0 || n % kVector != 0) {
    throw UsageError(std::string(what) + ": n = " + std::to_string(n) +
                     " must be a positive multiple of 8");
  }
  if (in.slot_of_tile != nullptr && in.geometry.rows_per_subtile() % kRowsPerCta != 0) {
    throw UsageError(std::string(what) + ": subtiles of " +
                     std::to_string(in.geometry.rows_per_subtile()) +
                     " rows; the reorder needs a multiple of " + std::to_string(kRowsPerCta));
  }
}

template <typename T, int kVectors>
void launch_rmsnorm(const ReorderSource& in, int rows, int n, const void* weight, float eps,
                    void* out, cudaStream_t stream) {
  rmsnorm_kernel<T, kVectors><<<cta_count(rows), kThreads, 0, stream>>>(
      in, rows, n, static_cast<const T*>(weight), eps, static_cast<T*>(out));
  KILN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void dispatch_rmsnorm(const ReorderSource& in, int rows, int n, const void* weight, float eps,
                      void* out, cudaStream_t stream) {
  const int vectors = (n / kVector + kThreads - 1) / kThreads;
  if (vectors <= 1)
    launch_rmsnorm<T, 1>(in, rows, n, weight, eps, out, stream);
  else if (vectors <= 2)
    launch_rmsnorm<T, 2>(in, rows, n, weight, eps, out, stream);
  else if (vectors <= 4)
    launch_rmsnorm<T, 4>(in, rows, n, weight, eps, out, stream);
  else
    launch_rmsnorm<T, 8>(in, rows, n, weight, eps, out, stream);
}

}  // namespace

void restore_row_major(const ReorderSource& in, core::DType dtype, int rows, int n, void* out,
                       cudaStream_t stream) {
  check_arguments(in, dtype, rows, n, "restore");
  if (rows == 0) return;
  if (dtype == core::DType::kBf16) {
    restore_kernel<__nv_bfloat16>
        <<<cta_count(rows), kThreads, 0, stream>>>(in, rows, n, static_cast<__nv_bfloat16*>(out));
  } else {
    restore_kernel<__half>
        <<<cta_count(rows), kThreads, 0, stream>>>(in, rows, n, static_cast<__half*>(out));
  }
  KILN_CUDA_CHECK_LAUNCH();
}

void rmsnorm_rows(const ReorderSource& in, core::DType dtype, int rows, int n, const void* weight,
                  float eps, void* out, cudaStream_t stream) {
  check_arguments(in, dtype, rows, n, "rmsnorm");
  if (n > kThreads * kVector * 8) {
    throw UsageError("rmsnorm: n = " + std::to_string(n) + " above the supported 16384");
  }
  if (rows == 0) return;
  if (dtype == core::DType::kBf16)
    dispatch_rmsnorm<__nv_bfloat16>(in, rows, n, weight, eps, out, stream);
  else
    dispatch_rmsnorm<__half>(in, rows, n, weight, eps, out, stream);
}

}  // namespace kiln::overlap
