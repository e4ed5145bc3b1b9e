/* The entry point of an outside candidate for `kiln bench candidate`: a CUDA source file that
 * defines kiln_candidate_run() with C linkage. kiln compiles it to a shared library
 * (nvcc -shared -Xcompiler -fPIC -arch=sm_90a), loads it in every rank process and calls it
 * where a problem's solution runs: after fresh inputs, into a poisoned output, on the rank's
 * stream. The candidate enqueues its work on `stream` and returns; it must finish all of it
 * there (work left on other streams is detected: kiln also times with a device-wide sync).
 *
 * Inputs live in peer memory: peer_inputs[r * num_inputs + i] is rank r's input i, readable
 * from this GPU over NVLink (own included). Every call gets fresh inputs, and each rank writes
 * its own just before the call with no barrier after: a candidate that reads a peer's inputs
 * must first synchronise with that peer (e.g. a flag barrier over `scratch`, as kiln's own
 * solutions do), or it may read the previous call's values. `scratch` is zeroed peer memory the candidate may
 * use for its own flags across calls (peer_scratch[r] is rank r's); `call` counts the calls on
 * this rank from 1, for epoch-style flags. Return 0 on success; any other value is an error.
 */
#ifndef KILN_CANDIDATE_H
#define KILN_CANDIDATE_H

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_CANDIDATE_ABI_VERSION 1

enum KilnDType { KILN_BF16 = 0, KILN_FP16 = 1, KILN_FP32 = 2, KILN_INT32 = 3 };

typedef struct KilnCandidateArgs {
  int abi_version; /* KILN_CANDIDATE_ABI_VERSION */
  int rank;
  int world;
  int dtype;           /* enum KilnDType */
  const char* problem; /* e.g. "allgather" */
  const char* size;    /* size preset, e.g. "1M" */
  int num_dims;
  const char* const* dim_names; /* e.g. "bytes_per_rank" */
  const long long* dims;
  int num_inputs;
  const void* const* inputs; /* this rank's */
  const unsigned long long* input_bytes;
  const void* const* peer_inputs; /* [world * num_inputs] */
  int num_outputs;
  void* const* outputs;
  const unsigned long long* output_bytes;
  void* scratch;                   /* this rank's zeroed peer memory */
  void* const* peer_scratch;       /* [world] */
  unsigned long long scratch_bytes;
  unsigned long long call;
  void* stream; /* cudaStream_t */
} KilnCandidateArgs;

/* Defined by the candidate. */
int kiln_candidate_run(const KilnCandidateArgs* args);
/* Optional: the ABI version the candidate was written for (kiln refuses a different one). */
int kiln_candidate_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* KILN_CANDIDATE_H */
