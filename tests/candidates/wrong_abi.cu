// Declares an ABI version kiln does not have: refused at load.
#include "kiln/candidate.h"
extern "C" int kiln_candidate_abi_version(void) { return KILN_CANDIDATE_ABI_VERSION + 41; }
extern "C" int kiln_candidate_run(const KilnCandidateArgs*) { return 0; }
