// Does no work and reports failure through its return value (7), as a candidate that detects a
// problem of its own should. kiln must reject it and say what it returned.
#include "kiln/candidate.h"

extern "C" int kiln_candidate_run(const KilnCandidateArgs*) {
  return 7;
}
