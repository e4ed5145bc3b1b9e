// Crashes the rank process (a null write on the host). kiln must survive and reject it.
#include "kiln/candidate.h"

extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) {
  volatile int* nowhere = nullptr;
  *nowhere = a->rank;
  return 0;
}
