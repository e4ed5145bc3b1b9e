// Shared by the test candidates: a one-block barrier kernel over the candidate's peer scratch
// (rank r's word p holds the last call on which rank p arrived), and a byte-wise gather.
#pragma once
#include <cuda_runtime.h>

#include "kiln/candidate.h"

struct CandidatePeers {
  unsigned long long* scratch[8];  // every rank's scratch
  const char* inputs[8];           // every rank's input 0
  int rank, world;
  unsigned long long call, bytes;
};

__global__ void candidate_barrier(CandidatePeers p) {
  const int peer = threadIdx.x;
  if (peer >= p.world || peer == p.rank) return;
  unsigned long long* remote = p.scratch[peer] + p.rank;
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(remote), "l"(p.call) : "memory");
  const unsigned long long* mine = p.scratch[p.rank] + peer;
  unsigned long long seen;
  do {
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(seen) : "l"(mine) : "memory");
  } while (seen < p.call);
}

__global__ void candidate_gather(CandidatePeers p, char* out, unsigned long long out_bytes) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < out_bytes;
       i += 256ull * gridDim.x) {
    out[i] = p.inputs[i / p.bytes][i % p.bytes];
  }
}

inline CandidatePeers candidate_peers(const KilnCandidateArgs* a) {
  CandidatePeers p{};
  for (int r = 0; r < a->world && r < 8; ++r) {
    p.scratch[r] = static_cast<unsigned long long*>(a->peer_scratch[r]);
    p.inputs[r] = static_cast<const char*>(a->peer_inputs[r * a->num_inputs]);
  }
  p.rank = a->rank;
  p.world = a->world;
  p.call = a->call;
  p.bytes = a->input_bytes[0];
  return p;
}
