// Runs the two-copy sm90 GEMM's load schedule (KERNEL: the generated unit's for_each_phase_run,
// between its kiln-phase-runs markers) on the CPU the way PhasedMainloop::load uses it: for
// phases of kt k-tiles cut into `slices` K slices (split-K; 1: none), every slice's tiles [0, S)
// starting at virtual tile l * S, also in pieces (a producer may be handed a tile's K range in
// parts). Over all slices the (A tile, B tile) pairs loaded must be each of the three products'
// pairs exactly once — (Ab t, Bb t), (Ab t, Bs t), (As t, Bb t) for t < kt, with Xs t stored at
// kt + t — and no load may leave the stored 2 kt tiles. Prints "<name>: N bad of M runs"; exits
// 1 when any run is wrong. Built and run by tests/cpu/evolve_matmul_split_emulation_test.cpp.
#include <cstdio>
#include <map>
#include <utility>

#define CUTE_HOST_DEVICE inline

#include KERNEL

int main() {
  int bad = 0, runs = 0;
  for (int kt = 1; kt <= 7; ++kt)
    for (int slices : {1, 2, 3, 4, 6, 9}) {
      if (3 * kt % slices != 0) continue;  // the candidate pads K so that slices are whole tiles
      const int S = 3 * kt / slices;
      for (int piece : {0, 1, 2, 5}) {  // 0: a slice at once; else pieces of at most `piece`
        ++runs;
        std::map<std::pair<int, int>, int> loads;
        bool wrong = false;
        for (int l = 0; l < slices; ++l)
          for (int start = 0; start < S;) {
            const int count = piece == 0 || S - start < piece ? S - start : piece;
            int covered = 0;
            for_each_phase_run(l * S + start, count, kt, [&](int offset, int n, int a, int b) {
              if (offset != covered || n < 1) wrong = true;  // runs in order, none empty
              covered += n;
              for (int i = 0; i < n; ++i) {
                if (a + i < 0 || a + i >= 2 * kt || b + i < 0 || b + i >= 2 * kt) wrong = true;
                ++loads[{a + i, b + i}];
              }
            });
            if (covered != count) wrong = true;
            start += count;
          }
        std::map<std::pair<int, int>, int> want;
        for (int t = 0; t < kt; ++t) {
          ++want[{t, t}];
          ++want[{t, kt + t}];
          ++want[{kt + t, t}];
        }
        if (loads != want) wrong = true;
        if (wrong)
          std::printf("%s: kt %d slices %d piece %d: the loads are not the three products\n", KNAME,
                      kt, slices, piece);
        bad += wrong;
      }
    }
  std::printf("%s: %d bad of %d runs\n", KNAME, bad, runs);
  return bad == 0 ? 0 : 1;
}
