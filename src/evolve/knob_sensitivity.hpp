// Which knobs matter on this problem, learnt from a search's own evaluations (issue 20). A knob
// mutation picks one knob of the parent; uniformly, a knob that decides the speed (a GEMM's
// tile shape: U 0.05 to 0.17 at one attention size) is stepped as rarely as one that barely
// moves it (the swizzle), and on a 24-evaluation budget the step that mattered may never come
// (one H200, 2026-11-30: guided search stayed at a 128 x 64 tile on two of three seeds of
// kb1-97-sdpa while random search drew 64 x 64). Here each knob's effect is the spread of mean
// log U across its values over the correct kernels seen so far (a main effect, as in a one-way
// analysis of variance), and mutation picks knobs in proportion to it, with a floor so that no
// knob is abandoned and knobs seen at fewer than two values kept at full weight (unknown, so
// worth trying). The idea is that of sensitivity-driven mutation in evolution strategies and of
// per-parameter importance in hyper-parameter search (fANOVA, Hutter et al. 2014); no code from
// either.
#pragma once

#include <map>
#include <string>

#include "evolve/genome.hpp"

namespace kiln::evolve {

class KnobSensitivity {
 public:
  // One evaluated genome: its knobs (the defaults of its strategies' knobs included) with its U.
  // Failures (u <= 0) teach nothing about speed and are left out.
  void add(const Genome& genome, double u);
  // "strategy.knob" -> the spread of mean log U across the values seen (0 below two values).
  double spread(const std::string& key) const;
  // Mutation weights over every knob seen: kFloor + (1 - kFloor) * spread / the largest spread;
  // a knob seen at fewer than two values weighs 1. Empty until some knob has two values.
  std::map<std::string, double> weights() const;

  static constexpr double kFloor = 0.2;

 private:
  struct Sum {
    double log_u = 0.0;
    int count = 0;
  };
  std::map<std::string, std::map<int, Sum>> by_value_;  // key -> value -> sums
};

}  // namespace kiln::evolve
