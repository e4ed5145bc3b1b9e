// Runs one generated pooling kernel (its device code, KERNEL: the source without its host
// sections): warp-row-separable's pool_warp_row_kernel, or with ELEMENT_THREADS defined (the
// block size) the element-per-thread / grid-stride pool_kernel, on the CPU through
// tests/emulation/cuda_fibers.h, on odd shapes of its window's dimensions (1-3), against a host
// pooling with PyTorch's semantics written here from the definitions, not from the kernel: max over
// the window's taps inside the input (padding never wins), average with count_include_pad (the
// window clipped to the padded extent divides), output length floor((in + 2 pad - dilation (kernel
// - 1) - 1) / stride) + 1, ceil_mode off. Inputs are small integers, so every sum is exact in fp32
// whatever the order and the comparison is exact (the average's multiplication by an exact inverse
// included). Each shape runs with the host code's grid and with 3 blocks (the warps then walk the
// rest), a poisoned guard after the output. Prints "<name>: N bad of M runs"; exits 1 when any run
// is wrong. Built and run by tests/cpu/evolve_pool_emulation_test.cpp (g++ with AddressSanitizer
// and UBSan).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_fibers.h"
#include KERNEL

namespace {

long long out_length(long long in) {
  const long long room =
      in + 2LL * kPadding - static_cast<long long>(kDilation) * (kKernel - 1) - 1;
  return room < 0 ? 0 : room / kStride + 1;
}

// PyTorch's count_include_pad divisor along one axis.
long long clipped(long long in, long long o) {
  const long long start = o * kStride - kPadding;
  return std::min(start + kKernel, in + kPadding) - start;
}

struct Shape {
  long long d, h, w;
};

}  // namespace

int main() {
  // Sizes from the smallest input the window accepts (one output) up: odd widths across a
  // warp's segment and beyond, short outer axes (their padding and clipping at both ends).
  const long long m =
      std::max(1LL, static_cast<long long>(kDilation) * (kKernel - 1) + 1 - 2LL * kPadding);
  // A row wider than a warp's segment of outputs, so that segments after the first run too.
#ifdef ELEMENT_THREADS
  const long long wide = (ELEMENT_THREADS * kRun + 17LL) * kStride;
#else
  const long long wide = (kSegment + 17LL) * kStride;
#endif
  std::vector<Shape> shapes;
  shapes.push_back({kDims >= 3 ? m : 1, kDims >= 2 ? m + 1 : 1, m + wide});
  if (kDims == 1)
    for (long long w : {0LL, 1LL, 4LL, 30LL, 33LL, 99LL, 520LL, 1029LL})
      shapes.push_back({1, 1, m + w});
  if (kDims == 2)
    for (Shape s :
         {Shape{0, 0, 0}, Shape{0, 4, 6}, Shape{0, 1, 33}, Shape{0, 3, 516}, Shape{0, 8, 129}})
      shapes.push_back({1, m + s.h, m + s.w});
  if (kDims == 3)
    for (Shape s : {Shape{0, 0, 0}, Shape{2, 4, 6}, Shape{5, 3, 34}, Shape{1, 2, 69}})
      shapes.push_back({m + s.d, m + s.h, m + s.w});
  const long long planes = 3;
  const std::uint32_t poison_bits = 0x7fc00001u;
  float poison;
  std::memcpy(&poison, &poison_bits, sizeof poison);
  int bad = 0, runs = 0;
  unsigned seed = 1;
  for (const Shape& in : shapes) {
    const Axis d{in.d, kDims >= 3 ? out_length(in.d) : in.d};
    const Axis h{in.h, kDims >= 2 ? out_length(in.h) : in.h};
    const Axis w{in.w, out_length(in.w)};
    if (d.out <= 0 || h.out <= 0 || w.out <= 0) continue;  // PyTorch refuses such an input
    const long long n_in = planes * d.in * h.in * w.in, n_out = planes * d.out * h.out * w.out;
    std::mt19937 random(seed++);
    std::vector<float> x(n_in), y(n_out + 32);
    for (float& v : x) v = static_cast<float>(static_cast<int>(random() % 17) - 8);
    // The host pooling.
    std::vector<float> want(n_out);
    for (long long p = 0; p < planes; ++p)
      for (long long od = 0; od < d.out; ++od)
        for (long long oh = 0; oh < h.out; ++oh)
          for (long long ow = 0; ow < w.out; ++ow) {
            double acc = kMax ? -INFINITY : 0.0;
            for (int kd = 0; kd < (kDims >= 3 ? kKernel : 1); ++kd)
              for (int kh = 0; kh < (kDims >= 2 ? kKernel : 1); ++kh)
                for (int kw = 0; kw < kKernel; ++kw) {
                  const long long id = kDims >= 3 ? od * kStride - kPadding + kd * kDilation : od;
                  const long long ih = kDims >= 2 ? oh * kStride - kPadding + kh * kDilation : oh;
                  const long long iw = ow * kStride - kPadding + kw * kDilation;
                  if (id < 0 || id >= d.in || ih < 0 || ih >= h.in || iw < 0 || iw >= w.in)
                    continue;
                  const double v = x[((p * d.in + id) * h.in + ih) * w.in + iw];
                  acc = kMax ? std::max(acc, v) : acc + v;
                }
            if (!kMax) {
              const long long count = (kDims >= 3 ? clipped(d.in, od) : 1) *
                                      (kDims >= 2 ? clipped(h.in, oh) : 1) * clipped(w.in, ow);
              acc = static_cast<float>(acc) / static_cast<float>(count);
            }
            want[((p * d.out + od) * h.out + oh) * w.out + ow] = static_cast<float>(acc);
          }
#ifdef ELEMENT_THREADS
    // As the kernel's host code decides it: float4 stores on rows of whole float4s.
    const bool aligned = w.out % 4 == 0 && reinterpret_cast<std::uintptr_t>(y.data()) % 16 == 0;
    const long long items = planes * d.out * h.out * ((w.out + kRun - 1) / kRun);
    const long long full_grid = (items + ELEMENT_THREADS - 1) / ELEMENT_THREADS;
#else
    const long long segments = (w.out + kSegment - 1) / kSegment;
    const long long tasks = planes * d.out * h.out * segments;
    const long long full_grid = (tasks + kWarps - 1) / kWarps;
#endif
    for (const long long blocks : {full_grid, std::min<long long>(full_grid, 3)}) {
      for (float& v : y) v = poison;
      emu::grid_dim = {static_cast<unsigned>(blocks), 1, 1};
      for (long long b = 0; b < blocks; ++b) {
        emu::block_index = {static_cast<unsigned>(b), 0, 0};
#ifdef ELEMENT_THREADS
        emu::run_block(ELEMENT_THREADS,
                       [&] { pool_kernel(x.data(), y.data(), planes, d, h, w, aligned); });
#else
        emu::run_block(kWarps * 32,
                       [&] { pool_warp_row_kernel(x.data(), y.data(), tasks, segments, d, h, w); });
#endif
      }
      ++runs;
      bool wrong = false;
      for (long long i = 0; i < n_out && !wrong; ++i) {
        if (std::memcmp(&y[i], &want[i], sizeof(float)) != 0) {
          if (bad < 5)
            std::printf("in %lldx%lldx%lld, %lld blocks, output %lld: %.9g, want %.9g\n", in.d,
                        in.h, in.w, blocks, i, y[i], want[i]);
          wrong = true;
        }
      }
      for (long long i = n_out; i < n_out + 32 && !wrong; ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, &y[i], sizeof bits);
        if (bits != poison_bits) {
          std::printf("in %lldx%lldx%lld: a write past the output's end\n", in.d, in.h, in.w);
          wrong = true;
        }
      }
      bad += wrong;
    }
  }
  std::printf("%s: %d bad of %d runs\n", KNAME, bad, runs);
  return bad != 0 || runs == 0;
}
