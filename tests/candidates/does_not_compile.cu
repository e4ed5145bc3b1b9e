// An outside candidate with a syntax error: kiln must report nvcc's message, not crash.
#include "kiln/candidate.h"
extern "C" int kiln_candidate_run(const KilnCandidateArgs* a) { return a->rank +; }
