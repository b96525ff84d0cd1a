// What a thread block cluster's synchronisation costs (sm_90+), as time per
// kernel in a CUDA graph of 200 launches, fastest of 10 replays (NOTES.md v18).
//
//     nvcc -arch=sm_90 -std=c++17 -O3 -o cluster_exchange_probe cluster_exchange_probe.cu
//     ./cluster_exchange_probe
//
// Every kernel reads one float4 a thread, sums it over the warp and writes it.
// Modes: 0 nothing more; 1 each warp's sum to shared memory, then a
// release/acquire cluster barrier (arrive + wait) and a read; 3 each warp
// sends its sum to every block of the cluster with st.async, counted by the
// receiving block's mbarrier (set up before a relaxed cluster arrive issued
// before the load; the wait comes after it), as rms_norm_fwd_cluster_kernel
// does; 4 the relaxed arrive and the wait of mode 3 with no exchange. Cluster
// dims set at run time (cudaLaunchKernelEx) or compiled in (__cluster_dims__).
// The last line checks mode 3's sums.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)

__device__ __forceinline__ unsigned crank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned csize() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned r) {
  unsigned o;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(o) : "r"(a), "r"(r));
  return o;
}

// MODE 1: arrive+wait (release/acquire) after loads. MODE 3: mbarrier exchange, relaxed arrive at
// start. MODE 4: relaxed arrive at start, wait after loads, no exchange. MODE 5: as 3 but st.async
// to self too via all ranks incl self.
template <int MODE, int K>
__device__ __forceinline__ void body(float* out, const float4* in) {
  __shared__ float sums[32];
  __shared__ alignas(8) uint64_t bar;
  const unsigned k = K > 0 ? K : csize();
  const int warps_total = (blockDim.x >> 5) * k;
  if (MODE >= 3) {
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)));
      if (MODE != 4)
        asm volatile(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar)),
            "r"(warps_total * 4));
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  }
  float4 v = in[blockIdx.x * blockDim.x + threadIdx.x];
  float a = v.x + v.y + v.z + v.w;
  for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (MODE == 1) {
    if (lane == 0) sums[warp] = a;
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    a += sums[lane & 1];
  } else if (MODE == 4) {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  } else if (MODE == 3) {
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    const int slot = crank() * (blockDim.x >> 5) + warp;
    if (lane < (int)k) {
      const unsigned dst = mapa(smem_addr(&sums[slot]), lane);
      const unsigned mb = mapa(smem_addr(&bar), lane);
      asm volatile(
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(dst),
          "r"(__float_as_uint(a)), "r"(mb)
          : "memory");
    }
    unsigned done = 0;
    while (!done) {
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, "
          "p; }"
          : "=r"(done)
          : "r"(smem_addr(&bar))
          : "memory");
    }
    a = lane < warps_total ? sums[lane] : 0.f;
    for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffffu, a, o);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
template <int MODE>
__global__ void kr(float* out, const float4* in) {
  body<MODE, 0>(out, in);
}
template <int MODE, int K>
__global__ void __cluster_dims__(K, 1, 1) kct(float* out, const float4* in) {
  body<MODE, K>(out, in);
}

int main() {
  float* out;
  float4* in;
  CK(cudaMalloc(&out, 64 << 20));
  CK(cudaMalloc(&in, 64 << 20));
  CK(cudaMemset(in, 0, 64 << 20));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  const int N = 200;
  auto time_graph = [&](auto launch) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < N; ++i) launch();
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int w = 0; w < 3; ++w) CK(cudaGraphLaunch(ge, st));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float best = 1e9;
    for (int r = 0; r < 10; ++r) {
      cudaEventRecord(a, st);
      CK(cudaGraphLaunch(ge, st));
      cudaEventRecord(b, st);
      CK(cudaEventSynchronize(b));
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      if (ms < best) best = ms;
    }
    return best * 1000.0f / N;
  };
  auto rt = [&](auto kern, int grid, int threads, int cl) {
    return [=, &st] {
      cudaLaunchConfig_t c{};
      c.gridDim = dim3(grid);
      c.blockDim = dim3(threads);
      c.stream = st;
      cudaLaunchAttribute at{};
      at.id = cudaLaunchAttributeClusterDimension;
      at.val.clusterDim.x = cl;
      at.val.clusterDim.y = 1;
      at.val.clusterDim.z = 1;
      c.attrs = &at;
      c.numAttrs = 1;
      CK(cudaLaunchKernelEx(&c, kern, out, (const float4*)in));
    };
  };
  for (int rows : {1, 16, 64}) {
    printf("rows %d plain 256 threads: %.3f\n", rows,
           time_graph([&] { kr<0><<<rows, 256, 0, st>>>(out, in); }));
    for (int cl : {2, 4, 8}) {
      const int g = rows * cl, t = 256 / cl;
      printf("rows %d k %d runtime: mode0 %.3f mode1 %.3f mode3 %.3f mode4 %.3f\n", rows, cl,
             time_graph(rt(kr<0>, g, t, cl)), time_graph(rt(kr<1>, g, t, cl)),
             time_graph(rt(kr<3>, g, t, cl)), time_graph(rt(kr<4>, g, t, cl)));
      if (cl == 2)
        printf("rows %d k 2 compile-time: mode1 %.3f mode3 %.3f mode4 %.3f\n", rows,
               time_graph([&] { kct<1, 2><<<g, t, 0, st>>>(out, in); }),
               time_graph([&] { kct<3, 2><<<g, t, 0, st>>>(out, in); }),
               time_graph([&] { kct<4, 2><<<g, t, 0, st>>>(out, in); }));
      if (cl == 4)
        printf("rows %d k 4 compile-time: mode1 %.3f mode3 %.3f mode4 %.3f\n", rows,
               time_graph([&] { kct<1, 4><<<g, t, 0, st>>>(out, in); }),
               time_graph([&] { kct<3, 4><<<g, t, 0, st>>>(out, in); }),
               time_graph([&] { kct<4, 4><<<g, t, 0, st>>>(out, in); }));
      if (cl == 8)
        printf("rows %d k 8 compile-time: mode1 %.3f mode3 %.3f mode4 %.3f\n", rows,
               time_graph([&] { kct<1, 8><<<g, t, 0, st>>>(out, in); }),
               time_graph([&] { kct<3, 8><<<g, t, 0, st>>>(out, in); }),
               time_graph([&] { kct<4, 8><<<g, t, 0, st>>>(out, in); }));
    }
  }
  // correctness of mode 3: in = ones -> each thread a = 4; warp sum 128; total = 128 * 8 warps =
  // 1024
  CK(cudaMemset(in, 0, 64 << 20));
  float* h = new float[1 << 16];
  {
    float4 one = make_float4(1, 1, 1, 1);
    float4* hv = new float4[4096];
    for (int i = 0; i < 4096; ++i) hv[i] = one;
    CK(cudaMemcpy(in, hv, sizeof(float4) * 4096, cudaMemcpyHostToDevice));
    rt(kr<3>, 16 * 4, 64, 4)();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h, out, 4 * 1024, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < 1024; ++i) bad += h[i] != 1024.f;
    printf("mode3 check: %d of 1024 wrong (first %.1f)\n", bad, h[0]);
  }
  return 0;
}
