// Runs the sm90 3xTF32 matmul's operand splits and slice sums (their device code, KERNEL: the
// generated source's kernels between put3 and the entry point, with a host tf32_big) on the CPU
// through tests/emulation/cuda_fibers.h, launched as the candidate's host code launches them:
// both source layouts (K contiguous, rows contiguous), K padded to kp for 1-3 slices of three
// copies and one of two (the phased GEMM's [big | small] rows), one and two
// batches, 16-byte aligned sources and sources one float off (the element-by-element paths),
// shapes not a multiple of any tile. Every element of the result is compared bit for bit with
// the host's split (big part rounded to TF32, the remainder exact; the padding zeros), and the
// result's slack is poisoned and must stay so; a triangle's banded split leaves the columns
// outside each row's band poisoned. Prints "<name>: N bad of M runs"; exits 1 when
// any run is wrong. Built and run by tests/cpu/evolve_matmul_split_emulation_test.cpp (g++
// with AddressSanitizer and UBSan).
#include <cstdint>
#include <cstring>
#include <vector>

#define EMU_STACK_BYTES (64 * 1024)  // thousands of blocks of small kernels
#include "cuda_fibers.h"

#include "tf32_host.h"

#include KERNEL
#include "grid_host.h"

namespace {

using emu_host::align16;
using emu_host::bits_of;
using emu_host::run_grid;
using emu_host::value;

}  // namespace

int main() {
  const std::uint32_t poison_bits = 0x7fc00001u;
  float poison;
  std::memcpy(&poison, &poison_bits, sizeof poison);
  struct Shape {
    long long rows, k;
  };
  // Rows and K off the transposing tile (32 rows x 128 columns), off whole vectors, and a few
  // blocks at most each (every block's 256 threads are fibers).
  const Shape shapes[] = {{1, 1},   {3, 5},   {4, 4},    {33, 7},  {37, 130},
                          {20, 33}, {5, 129}, {64, 260}, {40, 128}};
  int bad = 0, runs = 0;
  unsigned state = 7;
  for (const Shape& shape : shapes)
    // Three copies ([big | big | small] in any order) for 1-3 slices; two ([big | small], the
    // phased GEMM's) for one slice, K padded to whole 32-deep k-tiles, as the candidate does.
    for (int variant = 0; variant < 4; ++variant)
      for (long long batch = 1; batch <= 2; ++batch)
        for (int rows_contiguous = 0; rows_contiguous < 2; ++rows_contiguous)
          for (int offset = 0; offset < 2; ++offset) {
            const int copies = variant == 3 ? 2 : 3;
            const int splits = variant == 3 ? 1 : variant + 1;
            const long long rows = shape.rows, k = shape.k;
            const long long k_align = copies == 2 ? 32 : 4 * splits;
            const long long kp = (k + k_align - 1) / k_align * k_align;
            const long long dst_rows = rows + (rows % 4 == 0 ? 0 : 4 - rows % 4);  // as np
            const int small_block = copies == 2 ? 1 : (runs % 3);
            std::vector<float> src_store(batch * rows * k + 8);
            float* src = align16(src_store.data()) + offset;
            for (long long i = 0; i < batch * rows * k; ++i) src[i] = value(state);
            const long long dst_floats = batch * dst_rows * copies * kp;
            std::vector<float> dst_store(dst_floats + 8 + 16);
            float* dst = align16(dst_store.data());
            for (long long i = 0; i < dst_floats + 16; ++i) dst[i] = poison;
            // As the candidate's `split` chooses and launches; in a quarter of the runs (two
            // batches, source off by one) with one block row (`squeeze`), so that the kernels'
            // grid-stride loops over rows (taken past 65535 blocks) run too.
            const bool aligned = reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
            const bool squeeze = batch == 2 && offset == 1;
            const unsigned z = static_cast<unsigned>(batch);
            const auto rows_y = [&](long long blocks) {
              return static_cast<unsigned>(squeeze ? 1 : blocks < 65535 ? blocks : 65535);
            };
            if (rows_contiguous) {
              run_grid(
                  {static_cast<unsigned>((kp + 127) / 128), rows_y((rows + 31) / 32), z}, 256, [&] {
                    if (copies == 3)  // the default argument, as a three-copy candidate calls it
                      split_rows_contiguous(src, dst, rows, k, kp, dst_rows, small_block);
                    else
                      split_rows_contiguous(src, dst, rows, k, kp, dst_rows, small_block, copies);
                  });
            } else {
              const long long groups = (rows + kSplitRows - 1) / kSplitRows;
              run_grid({static_cast<unsigned>((kp / 4 + 255) / 256), rows_y(groups), z}, 256, [&] {
                if (copies == 3)
                  split_k_contiguous(src, dst, rows, k, kp, dst_rows, small_block,
                                     aligned && k % 4 == 0);
                else
                  split_k_contiguous(src, dst, rows, k, kp, dst_rows, small_block,
                                     aligned && k % 4 == 0, copies);
              });
            }
            ++runs;
            bool wrong = false;
            for (long long b = 0; b < batch && !wrong; ++b)
              for (long long r = 0; r < dst_rows && !wrong; ++r)
                for (long long c = 0; c < kp && !wrong; ++c) {
                  const float* row = dst + (b * dst_rows + r) * copies * kp;
                  for (int j = 0; j < copies && !wrong; ++j) {
                    float want = poison;  // rows past `rows` are the candidate's memset's
                    if (r < rows) {
                      const float v =
                          c >= k ? 0.0f
                                 : src[b * rows * k + (rows_contiguous ? c * rows + r : r * k + c)];
                      const float big = tf32_big(v);
                      want = j == small_block ? v - big : big;
                    }
                    if (bits_of(row[j * kp + c]) != bits_of(want)) {
                      std::printf(
                          "%s: split (%d copies) rows %lld k %lld kp %lld batch %lld %s offset "
                          "%d: batch %lld row %lld col %lld block %d: got %08x want %08x\n",
                          KNAME, copies, rows, k, kp, batch,
                          rows_contiguous ? "rows-contiguous" : "k-contiguous", offset, b, r, c, j,
                          bits_of(row[j * kp + c]), bits_of(want));
                      wrong = true;
                    }
                  }
                }
            for (long long i = dst_floats; i < dst_floats + 16 && !wrong; ++i)
              if (bits_of(dst[i]) != poison_bits) {
                std::printf("%s: split wrote past its result at %lld\n", KNAME, i);
                wrong = true;
              }
            bad += wrong;
          }
  // A triangle's band (split_k_contiguous's `band`): row r keeps the columns from its block's
  // first on (band_from) or up to its block's last, block r / band; the rest stay poisoned. Two
  // copies ([big | small]) and one (the raw copy a shared-memory split reads), any alignment.
  for (const Shape& shape : shapes)
    for (const long long band : {4LL, 8LL, 32LL})
      for (int band_from = 0; band_from < 2; ++band_from)
        for (int copies = 1; copies <= 2; ++copies)
          for (int offset = 0; offset < 2; ++offset) {
            const long long rows = shape.rows, k = shape.k, kp = (k + 31) / 32 * 32;
            std::vector<float> src_store(rows * k + 8);
            float* src = align16(src_store.data()) + offset;
            for (long long i = 0; i < rows * k; ++i) src[i] = value(state);
            const long long dst_floats = rows * copies * kp;
            std::vector<float> dst_store(dst_floats + 8 + 16);
            float* dst = align16(dst_store.data());
            for (long long i = 0; i < dst_floats + 16; ++i) dst[i] = poison;
            const bool aligned = reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
            const long long groups = (rows + kSplitRows - 1) / kSplitRows;
            run_grid(
                {static_cast<unsigned>((kp / 4 + 255) / 256), static_cast<unsigned>(groups), 1},
                256, [&] {
                  split_k_contiguous(src, dst, rows, k, kp, rows, 1, aligned && k % 4 == 0, copies,
                                     band, band_from == 1);
                });
            ++runs;
            bool wrong = false;
            for (long long r = 0; r < rows && !wrong; ++r) {
              const long long block = r / band;
              for (long long c = 0; c < kp && !wrong; ++c) {
                const bool kept = band_from ? c >= block * band : c < (block + 1) * band;
                for (int j = 0; j < copies && !wrong; ++j) {
                  float want = poison;
                  if (kept) {
                    const float v = c >= k ? 0.0f : src[r * k + c];
                    const float big = tf32_big(v);
                    want = copies == 1 ? v : j == 1 ? v - big : big;
                  }
                  const float got = dst[r * copies * kp + j * kp + c];
                  if (bits_of(got) != bits_of(want)) {
                    std::printf(
                        "%s: band %lld %s copies %d rows %lld k %lld offset %d: row %lld "
                        "col %lld block %d: got %08x want %08x\n",
                        KNAME, band, band_from ? "from" : "up-to", copies, rows, k, offset, r, c, j,
                        bits_of(got), bits_of(want));
                    wrong = true;
                  }
                }
              }
            }
            for (long long i = dst_floats; i < dst_floats + 16 && !wrong; ++i)
              if (bits_of(dst[i]) != poison_bits) {
                std::printf("%s: banded split wrote past its result at %lld\n", KNAME, i);
                wrong = true;
              }
            bad += wrong;
          }
  // The slice sums: `splits` slices of m x np partial sums into C (m x n), in slice order.
  const struct {
    long long m, n;
  } sums[] = {{1, 1}, {3, 4}, {5, 7}, {2, 300}, {9, 1028}, {4, 1021}};
  for (const auto& s : sums)
    for (int splits = 1; splits <= 3; ++splits)
      for (long long batch = 1; batch <= 2; ++batch)
        for (int offset = 0; offset < 2; ++offset) {
          const long long m = s.m, n = s.n, np = (n + 3) / 4 * 4;
          std::vector<float> part_store(batch * splits * m * np + 8), c_store(batch * m * n + 24);
          float* part = align16(part_store.data());
          float* C = align16(c_store.data()) + offset;
          for (long long i = 0; i < batch * splits * m * np; ++i) part[i] = value(state);
          for (long long i = 0; i < batch * m * n + 16; ++i) C[i] = poison;
          const unsigned z = static_cast<unsigned>(batch);
          // One block row when the batch is two and C is off by one: the row loop runs too.
          const unsigned y =
              batch == 2 && offset == 1 ? 1u : static_cast<unsigned>(m < 8192 ? m : 8192);
          run_grid({static_cast<unsigned>(((n + 3) / 4 + 255) / 256), y, z}, 256,
                   [&] { sum_slices(part, C, m, n, np, splits); });
          ++runs;
          bool wrong = false;
          for (long long b = 0; b < batch && !wrong; ++b)
            for (long long r = 0; r < m && !wrong; ++r)
              for (long long c = 0; c < n && !wrong; ++c) {
                float want = 0.0f;
                for (int q = 0; q < splits; ++q) want += part[((b * splits + q) * m + r) * np + c];
                const float got = C[(b * m + r) * n + c];
                if (bits_of(got) != bits_of(want)) {
                  std::printf(
                      "%s: sum m %lld n %lld splits %d batch %lld offset %d: (%lld, %lld, "
                      "%lld) got %08x want %08x\n",
                      KNAME, m, n, splits, batch, offset, b, r, c, bits_of(got), bits_of(want));
                  wrong = true;
                }
              }
          for (long long i = batch * m * n; i < batch * m * n + 16 && !wrong; ++i)
            if (bits_of(C[i]) != poison_bits) {
              std::printf("%s: sum wrote past C at %lld\n", KNAME, i);
              wrong = true;
            }
          bad += wrong;
        }
  std::printf("%s: %d bad of %d runs\n", KNAME, bad, runs);
  return bad == 0 ? 0 : 1;
}
