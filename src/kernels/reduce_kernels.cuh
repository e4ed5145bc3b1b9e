// The reduction kernels, templated on the input type, the operation and the knobs that must be
// compile-time (block size for complete unrolling, elements per load, loads per thread); the other
// knobs are uniform run-time branches. Included by one reduce_<dtype>.cu per input type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "kernels/reduce_detail.hpp"

namespace kiln::kernels::detail {

constexpr int kMaxBlock = 1024;

// The accumulator of an input type.
template <typename T>
using AccOf = std::conditional_t<std::is_same_v<T, int>, int, float>;

template <typename Acc, ReduceOp kOp>
__device__ __forceinline__ Acc identity() {
  if constexpr (kOp == ReduceOp::kSum) {
    return Acc(0);
  } else if constexpr (std::is_same_v<Acc, int>) {
    return kOp == ReduceOp::kMin ? INT_MAX : INT_MIN;
  } else {
    return kOp == ReduceOp::kMin ? __int_as_float(0x7f800000) : __int_as_float(0xff800000);
  }
}

template <typename Acc, ReduceOp kOp>
__device__ __forceinline__ Acc combine(Acc a, Acc b) {
  if constexpr (kOp == ReduceOp::kSum) {
    if constexpr (std::is_same_v<Acc, int>) {
      // Two's-complement wrap-around, defined (signed overflow is not).
      return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
    } else {
      return a + b;
    }
  } else if constexpr (kOp == ReduceOp::kMin) {
    return min(a, b);
  } else {
    return max(a, b);
  }
}

template <typename T>
__device__ __forceinline__ AccOf<T> widen(T v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else
    return v;
}

// Combines the kElems elements of load `index` of the body (16 bytes or one element).
template <typename T, ReduceOp kOp, int kElems>
__device__ __forceinline__ AccOf<T> load_combined(const T* body, std::int64_t index) {
  using Acc = AccOf<T>;
  if constexpr (kElems == 1) {
    return widen(body[index]);
  } else {
    static_assert(kElems * sizeof(T) == 16);
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(body) + index);
    const T* e = reinterpret_cast<const T*>(&raw);
    Acc v = widen(e[0]);
#pragma unroll
    for (int i = 1; i < kElems; ++i) v = combine<Acc, kOp>(v, widen(e[i]));
    return v;
  }
}

// This thread's share of tiles [first_tile, ...) stepping by tile_step: kItems loads of the tile
// issued before any is combined (loads in flight), tile = block x kItems loads.
template <typename T, ReduceOp kOp, int kElems, int kItems>
__device__ __forceinline__ AccOf<T> accumulate_body(const T* body, std::int64_t loads, int block,
                                                    std::int64_t first_tile,
                                                    std::int64_t tile_step) {
  using Acc = AccOf<T>;
  Acc v = identity<Acc, kOp>();
  const std::int64_t per_tile = static_cast<std::int64_t>(block) * kItems;
  for (std::int64_t base = first_tile * per_tile + threadIdx.x; base < loads;
       base += tile_step * per_tile) {
    Acc got[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const std::int64_t index = base + static_cast<std::int64_t>(i) * block;
      got[i] = index < loads ? load_combined<T, kOp, kElems>(body, index) : identity<Acc, kOp>();
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) v = combine<Acc, kOp>(v, got[i]);
  }
  return v;
}

// The block's value in thread 0. kBlock > 0: the block size is a compile-time constant and every
// tree loop is unrolled completely (v4); 0: blockDim.x at run time.
template <typename Acc, ReduceOp kOp, int kBlock>
__device__ __forceinline__ Acc block_reduce(Acc v, Acc* tree, Addressing addressing,
                                            WarpTail tail) {
  const int block = kBlock > 0 ? kBlock : static_cast<int>(blockDim.x);
  const int tid = threadIdx.x;
  if (tail == WarpTail::kWarp) {
    // Every warp by shuffles, then the first warp over the warp sums: one barrier in all.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      v = combine<Acc, kOp>(v, __shfl_down_sync(0xffffffffu, v, offset));
    if (tid % 32 == 0) tree[tid / 32] = v;
    __syncthreads();
    if (tid < 32) {
      v = tid < block / 32 ? tree[tid] : identity<Acc, kOp>();
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2)
        v = combine<Acc, kOp>(v, __shfl_down_sync(0xffffffffu, v, offset));
    }
    return v;
  }
  tree[tid] = v;
  __syncthreads();
  if (addressing == Addressing::kInterleaved) {
    // v1: the active threads are every 2s-th, spread over all warps (divergent).
#pragma unroll
    for (int s = 1; s < block; s *= 2) {
      if (tid % (2 * s) == 0) tree[tid] = combine<Acc, kOp>(tree[tid], tree[tid + s]);
      __syncthreads();
    }
    return tree[0];
  }
  const int stop = tail == WarpTail::kNone ? 0 : 32;
#pragma unroll
  for (int s = block / 2; s > stop; s /= 2) {
    if (tid < s) tree[tid] = combine<Acc, kOp>(tree[tid], tree[tid + s]);
    __syncthreads();
  }
  if (tail == WarpTail::kNone) return tree[0];
  if (tid >= 32) return v;
  if (tail == WarpTail::kUnrolled) {
    // v3a: the last warp without block barriers; volatile so that every step re-reads memory,
    // __syncwarp so that the lanes (independently scheduled since Volta) stay in step.
    volatile Acc* last = tree;
    Acc x = combine<Acc, kOp>(last[tid], last[tid + 32]);
    __syncwarp();
    last[tid] = x;
    __syncwarp();
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      x = combine<Acc, kOp>(x, last[tid + offset]);
      __syncwarp();
      last[tid] = x;
      __syncwarp();
    }
    return x;
  }
  // v3b: the last 64 values by warp shuffles.
  Acc x = combine<Acc, kOp>(tree[tid], tree[tid + 32]);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    x = combine<Acc, kOp>(x, __shfl_down_sync(0xffffffffu, x, offset));
  return x;
}

template <typename Acc, ReduceOp kOp>
__device__ __forceinline__ void atomic_combine(Acc* out, Acc v) {
  if constexpr (kOp == ReduceOp::kSum) {
    atomicAdd(out, v);
  } else if constexpr (std::is_same_v<Acc, int>) {
    if constexpr (kOp == ReduceOp::kMin)
      atomicMin(out, v);
    else
      atomicMax(out, v);
  } else {
    __trap();  // rejected on the host (invalid_reason)
  }
}

// One pass: every block reduces its tiles and completes as args.completion says.
template <typename T, ReduceOp kOp, int kBlock, int kElems, int kItems>
__global__ void __launch_bounds__(kBlock > 0 ? kBlock : kMaxBlock)
    reduce_pass_kernel(const T* in, PassArgs args) {
  using Acc = AccOf<T>;
  __shared__ Acc shared_tree[kBlock > 0 ? kBlock : kMaxBlock];
  __shared__ bool is_last;
  const int block = kBlock > 0 ? kBlock : static_cast<int>(blockDim.x);
  const ReduceLaunch& launch = args.launch;
  const T* body = in + launch.head;
  Acc v =
      accumulate_body<T, kOp, kElems, kItems>(body, launch.vectors, block, blockIdx.x, gridDim.x);
  if (blockIdx.x == 0) {
    // The scalar head before the first 16-byte boundary and the tail after the last full load.
    const int tid = threadIdx.x;
    if (tid < launch.head) v = combine<Acc, kOp>(v, widen(in[tid]));
    if (tid < launch.tail) v = combine<Acc, kOp>(v, widen(body[launch.vectors * kElems + tid]));
  }
  Acc* tree = args.workspace == Workspace::kGlobal
                  ? static_cast<Acc*>(args.scratch) + static_cast<std::int64_t>(blockIdx.x) * block
                  : shared_tree;
  const Acc block_value = block_reduce<Acc, kOp, kBlock>(v, tree, args.addressing, args.tail);

  Acc* partials = static_cast<Acc*>(args.partials);
  switch (args.completion) {
    case Completion::kMultiPass:
      if (threadIdx.x == 0) partials[blockIdx.x] = block_value;
      return;
    case Completion::kAtomic:
      if (threadIdx.x == 0) atomic_combine<Acc, kOp>(static_cast<Acc*>(args.out), block_value);
      return;
    case Completion::kLastBlock:
      break;
  }
  // Last-block completion (threadFenceReduction pattern): publish, count, and the block that
  // counts last reduces every partial in a fixed order (deterministic) and rearms the counter.
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_value;
    __threadfence();
    const unsigned ticket = atomicAdd(args.counter, 1u);
    // Orders the other blocks' partials (published before their increments) before this block's
    // reads under the PTX memory model, not only in practice.
    __threadfence();
    is_last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  Acc w = identity<Acc, kOp>();
  for (int i = threadIdx.x; i < static_cast<int>(gridDim.x); i += block)
    w = combine<Acc, kOp>(w, __ldcg(partials + i));
  __syncthreads();  // the tree is reused
  const Acc total =
      block_reduce<Acc, kOp, kBlock>(w, shared_tree, Addressing::kSequential,
                                     args.tail == WarpTail::kNone ? WarpTail::kWarp : args.tail);
  if (threadIdx.x == 0) {
    *static_cast<Acc*>(args.out) = total;
    *args.counter = 0;
  }
}

// One block per row; the row's start alignment decides its scalar head.
template <typename T, ReduceOp kOp, int kElems, int kItems>
__global__ void __launch_bounds__(kMaxBlock)
    reduce_rows_kernel(const T* in, std::int64_t cols, AccOf<T>* out, Addressing addressing,
                       WarpTail tail) {
  using Acc = AccOf<T>;
  __shared__ Acc tree[kMaxBlock];
  const T* row = in + static_cast<std::int64_t>(blockIdx.x) * cols;
  std::int64_t head = 0;
  if constexpr (kElems > 1) {
    const unsigned misalignment = reinterpret_cast<std::uintptr_t>(row) % 16;
    head = misalignment == 0 ? 0 : (16 - misalignment) / sizeof(T);
    if (head > cols) head = cols;
  }
  const std::int64_t loads = (cols - head) / kElems;
  const std::int64_t tail_count = cols - head - loads * kElems;
  const T* body = row + head;
  Acc v = accumulate_body<T, kOp, kElems, kItems>(body, loads, blockDim.x, 0, 1);
  const int tid = threadIdx.x;
  if (tid < head) v = combine<Acc, kOp>(v, widen(row[tid]));
  if (tid < tail_count) v = combine<Acc, kOp>(v, widen(body[loads * kElems + tid]));
  const Acc total = block_reduce<Acc, kOp, 0>(v, tree, addressing, tail);
  if (tid == 0) out[blockIdx.x] = total;
}

// ---- Run-time knobs to template instantiations ----

template <typename T, ReduceOp kOp, int kBlock, int kElems, int kItems>
auto pass_kernel() {
  return &reduce_pass_kernel<T, kOp, kBlock, kElems, kItems>;
}

// Calls f(kernel pointer) for the instantiation the variant names.
template <typename T, ReduceOp kOp, int kBlock, typename F>
void with_items(const ReduceVariant& v, F&& f) {
  constexpr int kVector = 16 / sizeof(T);
  if (v.vector_bytes == 16) {
    switch (v.items) {
      case 1:
        return f(pass_kernel<T, kOp, kBlock, kVector, 1>());
      case 2:
        return f(pass_kernel<T, kOp, kBlock, kVector, 2>());
      case 4:
        return f(pass_kernel<T, kOp, kBlock, kVector, 4>());
      default:
        return f(pass_kernel<T, kOp, kBlock, kVector, 8>());
    }
  }
  if (v.items == 1) return f(pass_kernel<T, kOp, kBlock, 1, 1>());
  return f(pass_kernel<T, kOp, kBlock, 1, 2>());
}

template <typename T, ReduceOp kOp, typename F>
void with_pass_kernel(const ReduceVariant& v, F&& f) {
  if (!v.complete_unroll) return with_items<T, kOp, 0>(v, f);
  switch (v.block) {
    case 256:
      return with_items<T, kOp, 256>(v, f);
    case 512:
      return with_items<T, kOp, 512>(v, f);
    default:
      return with_items<T, kOp, 1024>(v, f);
  }
}

template <typename T, typename F>
void with_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::kSum:
      return f(std::integral_constant<ReduceOp, ReduceOp::kSum>{});
    case ReduceOp::kMin:
      return f(std::integral_constant<ReduceOp, ReduceOp::kMin>{});
    default:
      return f(std::integral_constant<ReduceOp, ReduceOp::kMax>{});
  }
}

template <typename T>
void launch_pass_typed(ReduceOp op, const ReduceVariant& v, const void* in, const PassArgs& args,
                       cudaStream_t stream) {
  if (args.launch.blocks > INT_MAX) {
    throw UsageError(
        "reduce: the variant needs more than 2^31-1 blocks; raise items or use "
        "grid=persistent");
  }
  with_op<T>(op, [&](auto op_constant) {
    with_pass_kernel<T, decltype(op_constant)::value>(v, [&](auto kernel) {
      kernel<<<static_cast<unsigned>(args.launch.blocks), v.block, 0, stream>>>(
          static_cast<const T*>(in), args);
      KILN_CUDA_CHECK_LAUNCH();
    });
  });
}

template <typename T>
int pass_blocks_per_sm_typed(ReduceOp op, const ReduceVariant& v) {
  int blocks = 0;
  with_op<T>(op, [&](auto op_constant) {
    with_pass_kernel<T, decltype(op_constant)::value>(v, [&](auto kernel) {
      KILN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, v.block, 0));
    });
  });
  return blocks;
}

template <typename T>
void launch_rows_typed(ReduceOp op, const ReduceVariant& v, const void* in, std::int64_t rows,
                       std::int64_t cols, void* out, cudaStream_t stream) {
  constexpr int kVector = 16 / sizeof(T);
  with_op<T>(op, [&](auto op_constant) {
    constexpr ReduceOp kOp = decltype(op_constant)::value;
    const auto launch = [&](auto kernel) {
      kernel<<<static_cast<unsigned>(rows), v.block, 0, stream>>>(
          static_cast<const T*>(in), cols, static_cast<AccOf<T>*>(out), v.addressing, v.tail);
      KILN_CUDA_CHECK_LAUNCH();
    };
    if (v.vector_bytes == 16) {
      switch (v.items) {
        case 1:
          return launch(&reduce_rows_kernel<T, kOp, kVector, 1>);
        case 2:
          return launch(&reduce_rows_kernel<T, kOp, kVector, 2>);
        case 4:
          return launch(&reduce_rows_kernel<T, kOp, kVector, 4>);
        default:
          return launch(&reduce_rows_kernel<T, kOp, kVector, 8>);
      }
    }
    if (v.items == 1) return launch(&reduce_rows_kernel<T, kOp, 1, 1>);
    return launch(&reduce_rows_kernel<T, kOp, 1, 2>);
  });
}

}  // namespace kiln::kernels::detail

#define KILN_REDUCE_DEFINE(NAME, TYPE)                                                            \
  namespace kiln::kernels::detail {                                                               \
  void launch_pass_##NAME(ReduceOp op, const ReduceVariant& variant, const void* in,              \
                          const PassArgs& args, cudaStream_t stream) {                            \
    launch_pass_typed<TYPE>(op, variant, in, args, stream);                                       \
  }                                                                                               \
  int pass_blocks_per_sm_##NAME(ReduceOp op, const ReduceVariant& variant) {                      \
    return pass_blocks_per_sm_typed<TYPE>(op, variant);                                           \
  }                                                                                               \
  void launch_rows_##NAME(ReduceOp op, const ReduceVariant& variant, const void* in,              \
                          std::int64_t rows, std::int64_t cols, void* out, cudaStream_t stream) { \
    launch_rows_typed<TYPE>(op, variant, in, rows, cols, out, stream);                            \
  }                                                                                               \
  }
