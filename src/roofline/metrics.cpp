// fast_p and roof_u (see metrics.hpp).
#include "roofline/metrics.hpp"

#include "core/error.hpp"
#include "roofline/roofline.hpp"

namespace kiln::roofline {

double fast_p(const std::vector<ProblemOutcome>& outcomes, double p) {
  if (outcomes.empty()) throw Error("fast_p: no problems");
  int hits = 0;
  for (const ProblemOutcome& o : outcomes) {
    if (o.correct && o.seconds > 0 && o.reference_seconds >= p * o.seconds) ++hits;
  }
  return static_cast<double>(hits) / static_cast<double>(outcomes.size());
}

double roof_u(const std::vector<ProblemOutcome>& outcomes, double u) {
  if (outcomes.empty()) throw Error("roof_u: no problems");
  int hits = 0;
  for (const ProblemOutcome& o : outcomes) {
    if (o.correct && utilization(o.roof_seconds, o.seconds) > u) ++hits;
  }
  return static_cast<double>(hits) / static_cast<double>(outcomes.size());
}

}  // namespace kiln::roofline
