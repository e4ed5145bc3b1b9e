// Compiles, but defines no kiln_candidate_run: kiln must say what is missing.
extern "C" int something_else(void) { return 0; }
