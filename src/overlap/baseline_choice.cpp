// The cuBLAS baseline's candidate choice (see baseline_choice.hpp).
#include "overlap/baseline_choice.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace kiln::overlap {

std::vector<int> sustained_candidates(const std::vector<double>& screened, bool first_screened,
                                      int count, double within) {
  if (screened.empty() || count < 1 || within < 0.0) {
    throw Error("sustained_candidates: need >= 1 timing, count >= 1 and within >= 0");
  }
  std::vector<int> order(screened.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return screened[x] < screened[y]; });
  std::vector<int> kept;
  for (const int i : order) {
    if (static_cast<int>(kept.size()) < count &&
        screened[i] <= (1.0 + within) * screened[order.front()]) {
      kept.push_back(i);
    }
  }
  if (first_screened && std::find(kept.begin(), kept.end(), 0) == kept.end()) kept.push_back(0);
  return kept;
}

int pick_candidate(const std::vector<double>& medians, const std::vector<int>& timed, double tie) {
  if (timed.empty()) throw Error("pick_candidate: no candidate timed");
  for (const int i : timed) {
    if (i < 0 || i >= static_cast<int>(medians.size())) {
      throw Error("pick_candidate: candidate index out of range");
    }
  }
  const int fastest = *std::min_element(timed.begin(), timed.end(),
                                        [&](int x, int y) { return medians[x] < medians[y]; });
  const bool first_timed = std::find(timed.begin(), timed.end(), 0) != timed.end();
  return first_timed && medians[0] <= (1.0 + tie) * medians[fastest] ? 0 : fastest;
}

}  // namespace kiln::overlap
