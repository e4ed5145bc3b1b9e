// Runs the triangular matmul's operand splits and slice sums (their device code, KERNEL: the
// generated source's constants and kernels, without the CUTLASS unit and host code) on the CPU
// through tests/emulation/cuda_fibers.h, launched as the candidate launches them: n off the
// block size and below one block, A 16-byte aligned and one float off. Every element is
// compared bit for bit with the host's split: A' and B' hold the split of the blocks the grouped
// GEMM reads (big part rounded to TF32, the remainder exact, padding zeros) and nothing else;
// the target holds zeros exactly in the product's blocks off the triangle; the slice sums add
// their parts in order to exactly their regions. Prints "<name>: N bad of M runs"; exits 1 when
// any run is wrong. Built and run by tests/cpu/evolve_matmul_split_emulation_test.cpp (g++ with
// AddressSanitizer and UBSan).
#include <algorithm>
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

// Where element c of a K-major row lands in sub-block j (the generator's put3).
long long at(long long c, int j) {
  return (c / kBlock) * 3 * kBlock + c % kBlock + j * kBlock;
}

}  // namespace

int main() {
  const std::uint32_t poison_bits = 0x7fc00001u;
  float poison;
  std::memcpy(&poison, &poison_bits, sizeof poison);
  int bad = 0, runs = 0;
  unsigned state = 11;
  struct Case {
    long long n;
    int offset;
  };
  const Case cases[] = {{5, 0}, {kBlock, 0}, {kBlock, 1}, {2 * kBlock + 1, 0}};
  for (const Case& cs : cases) {
    const long long n = cs.n, np = (n + kBlock - 1) / kBlock * kBlock, ldt = np;
    std::vector<float> a_store(n * n + 8), b_store(n * n + 8);
    float* A = align16(a_store.data()) + cs.offset;
    float* B = align16(b_store.data());
    for (long long i = 0; i < n * n; ++i) A[i] = value(state);
    for (long long i = 0; i < n * n; ++i) B[i] = value(state);
    std::vector<float> a3_store(np * 3 * np + 8), b3_store(np * 3 * np + 8), t_store(np * ldt + 8);
    float* a3 = align16(a3_store.data());
    float* b3 = align16(b3_store.data());
    float* target = align16(t_store.data());
    for (long long i = 0; i < np * 3 * np; ++i) a3[i] = b3[i] = poison;
    for (long long i = 0; i < np * ldt; ++i) target[i] = poison;
    // As the candidate launches them.
    const bool a_aligned = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(A) % 16 == 0;
    const unsigned y_rows = static_cast<unsigned>(np < 8192 ? np : 8192);
    run_grid({static_cast<unsigned>((np / 4 + 255) / 256), y_rows, 1}, 256,
             [&] { split_a(A, a3, n, np, target, ldt, a_aligned); });
    run_grid({static_cast<unsigned>(np / 128), static_cast<unsigned>(np / 32), 1}, 256,
             [&] { split_b(B, b3, n, np); });
    ++runs;
    bool wrong = false;
    const auto expect = [&](const char* what, long long r, long long c, float got, float want) {
      if (wrong || bits_of(got) == bits_of(want)) return;
      std::printf("%s: n %lld offset %d: %s (%lld, %lld): got %08x want %08x\n", KNAME, n,
                  cs.offset, what, r, c, bits_of(got), bits_of(want));
      wrong = true;
    };
    for (long long r = 0; r < np; ++r)
      for (long long c = 0; c < np; ++c) {
        // A' row r, K column c; the target's (r, c).
        const bool a_read = a_block_read(r / kBlock, c / kBlock);
        const float av = r < n && c < n ? A[r * n + c] : 0.0f;
        for (int j = 0; j < 3; ++j)
          expect("A'", r, c, a3[r * 3 * np + at(c, j)],
                 !a_read  ? poison
                 : j == 2 ? av - tf32_big(av)
                          : tf32_big(av));
        expect("target", r, c, target[r * ldt + c], a_read ? poison : 0.0f);
        // B' row r (an output column), K column c: B's (c, r).
        const bool b_read = b_block_read(r / kBlock, c / kBlock);
        const float bv = c < n && r < n ? B[c * n + r] : 0.0f;
        for (int j = 0; j < 3; ++j)
          expect("B'", r, c, b3[r * 3 * np + at(c, j)],
                 !b_read  ? poison
                 : j == 1 ? bv - tf32_big(bv)
                          : tf32_big(bv));
      }
    bad += wrong;
    // The slice sums over the blocks of this size: each (I, J .. J + w - 1) region of the target
    // += `parts` units (w blocks each, `w` units apart), in order.
    const long long nt = np / kBlock;
    std::vector<int> sums;
    int units = 0;
    for (long long I = 0; I < nt; ++I)
      for (long long J = I % 2; J < nt; J += kGroupBlocks + 1) {
        // As wide as a group, or narrower at the triangle's edge (the generator's last run).
        const int w = static_cast<int>(std::min<long long>(kGroupBlocks, nt - J)),
                  parts = 1 + static_cast<int>((I + J) % 3);
        sums.insert(sums.end(), {static_cast<int>(I), static_cast<int>(J), w, units, parts});
        units += w * parts;
      }
    if (sums.empty()) continue;
    std::vector<float> p_store(static_cast<size_t>(units) * kBlock * kBlock + 8);
    float* parts = align16(p_store.data());
    for (long long i = 0; i < static_cast<long long>(units) * kBlock * kBlock; ++i)
      parts[i] = value(state);
    for (long long i = 0; i < np * ldt; ++i) target[i] = value(state);
    const std::vector<float> before(target, target + np * ldt);
    run_grid({static_cast<unsigned>((kBlock * kBlock * kGroupBlocks / 4 + 255) / 256),
              static_cast<unsigned>(sums.size() / 5), 1},
             256, [&] { add_slices(target, ldt, parts, sums.data()); });
    ++runs;
    wrong = false;
    std::vector<float> want = before;
    for (std::size_t e = 0; e < sums.size(); e += 5) {
      const long long I = sums[e], J = sums[e + 1], w = sums[e + 2], first = sums[e + 3],
                      count = sums[e + 4], width = w * kBlock;
      for (long long r = 0; r < kBlock; ++r)
        for (long long c = 0; c < width; ++c) {
          float v = want[(I * kBlock + r) * ldt + J * kBlock + c];
          for (long long q = 0; q < count; ++q)
            v += parts[(first + q * w) * kBlock * kBlock + r * width + c];
          want[(I * kBlock + r) * ldt + J * kBlock + c] = v;
        }
    }
    for (long long i = 0; i < np * ldt; ++i)
      expect("slice sum", i / ldt, i % ldt, target[i], want[i]);
    bad += wrong;
  }
  std::printf("%s: %d bad of %d runs\n", KNAME, bad, runs);
  return bad == 0 ? 0 : 1;
}
