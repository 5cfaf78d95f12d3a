/* Block-cooperative kernels: shared memory, __syncthreads, warp shuffles and votes,
 * dynamic shared memory, atomics, launch errors. Oracles are computed on the host.
 * Built twice (Makefile): against the CPU emulation tests/shim (test_shim_emulated,
 * where every kernel here needs threads to interleave at barriers, which the old
 * one-thread-after-another emulation could not do), and by nvcc when it is found
 * (test_shim_gpu, which checks the same expectations on a device: SKIP without one,
 * a failure with SAPSIM_REQUIRE_GPU=1). The emulated build also checks that a thread
 * returning while others wait at a barrier aborts with a message (fork). */
#include <stdint.h>

#ifdef SAP_CUDA_SHIM
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "check.h"
#include "cuda_check.h"

static const cudaStream_t stream = NULL;  /* the stream every launch here goes to */

#define BLOCK 256

static int device_ok(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  int ok = e == cudaSuccess && n > 0;
  const char* req = getenv("SAPSIM_REQUIRE_GPU");
  if (!ok && req && req[0] == '1') CHECK(0, "SAPSIM_REQUIRE_GPU=1 but no usable GPU");
  return ok;
}

/* device buffers: allocate, copy in, copy out */
static void* dev_alloc(size_t n) {
  void* p = NULL;
  if (cudaMalloc(&p, n) != cudaSuccess) {
    CHECK(0, "cudaMalloc(%zu) failed", n);
    return NULL;
  }
  return p;
}
static void* dev_from(const void* h, size_t n) {
  void* p = dev_alloc(n);
  if (p) CHECK(cudaMemcpy(p, h, n, cudaMemcpyHostToDevice) == cudaSuccess, "copy in");
  return p;
}
static int dev_to(void* h, const void* d, size_t n) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
  CHECK(e == cudaSuccess, "kernel or copy out: %s", cudaGetErrorString(e));
  return e == cudaSuccess;
}

/* ---- block tree reduction in static shared memory ---- */
static __global__ void block_sum_kernel(const double* x, int n, double* out) {
  __shared__ double buf[BLOCK];
  unsigned t = threadIdx.x;
  int i = (int)(blockIdx.x * blockDim.x + t);
  buf[t] = i < n ? x[i] : 0.0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}

static void test_block_reduction(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { N = 1000, NB = (N + BLOCK - 1) / BLOCK };
  double x[N], want[NB] = {0}, got[NB];
  for (int i = 0; i < N; i++) {
    x[i] = check_uniform(-1, 1);
    want[i / BLOCK] += x[i];
  }
  double* dx = (double*)dev_from(x, sizeof(x));
  double* dout = (double*)dev_alloc(sizeof(got));
  if (!dx || !dout) return;
  SAPG_LAUNCH(block_sum_kernel, NB, BLOCK, stream)(dx, N, dout);
  if (dev_to(got, dout, sizeof(got))) check_arrays("block sums", got, want, NB, 1e-12, 1e-12);
  cudaFree(dx);
  cudaFree(dout);
}

/* ---- two phases: thread t reads what thread (t+1)%n wrote before the barrier, then
 * the array is overwritten (after a second barrier) and read the other way ---- */
static __global__ void neighbour_kernel(const int* x, int* out1, int* out2) {
  __shared__ int s[BLOCK];
  unsigned t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
  s[t] = x[base + t];
  __syncthreads();
  int a = s[(t + 1) % n];
  __syncthreads();  /* everyone has read s before it is overwritten */
  s[t] = 3 * a + (int)t;
  __syncthreads();
  out1[base + t] = a;
  out2[base + t] = s[(t + n - 1) % n];
}

static void test_neighbour_exchange(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { NT = 100, NB = 3, N = NT * NB };  /* 100 threads: the last warp is partial */
  int x[N], o1[N], o2[N];
  for (int i = 0; i < N; i++) x[i] = 7 * i + 1;
  int* dx = (int*)dev_from(x, sizeof(x));
  int* d1 = (int*)dev_alloc(sizeof(o1));
  int* d2 = (int*)dev_alloc(sizeof(o2));
  if (!dx || !d1 || !d2) return;
  SAPG_LAUNCH(neighbour_kernel, NB, NT, stream)(dx, d1, d2);
  if (dev_to(o1, d1, sizeof(o1)) && dev_to(o2, d2, sizeof(o2))) {
    int bad = 0;
    for (int b = 0; b < NB; b++)
      for (int t = 0; t < NT; t++) {
        int i = b * NT + t, prev = (t + NT - 1) % NT;
        int a = x[b * NT + (t + 1) % NT];
        int aprev = x[b * NT + (prev + 1) % NT];
        if (o1[i] != a || o2[i] != 3 * aprev + prev) {
          if (!bad++)
            CHECK(0, "block %d thread %d: got %d %d want %d %d", b, t, o1[i], o2[i], a,
                  3 * aprev + prev);
        }
      }
    CHECK(!bad, "%d threads read the wrong neighbour value", bad);
  }
  cudaFree(dx);
  cudaFree(d1);
  cudaFree(d2);
}

/* ---- blocks of one launch where only some use a barrier (uniformly per block) ---- */
static __global__ void mixed_blocks_kernel(int* out) {
  __shared__ int s[BLOCK];
  unsigned t = threadIdx.x, n = blockDim.x, i = blockIdx.x * n + t;
  if (blockIdx.x % 3 == 1) {
    s[t] = (int)(i * i);
    __syncthreads();
    out[i] = s[(t + 1) % n];
  } else {
    out[i] = -(int)i;
  }
}

static void test_mixed_blocks(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { NT = 64, NB = 7, N = NT * NB };
  int got[N];
  int* d = (int*)dev_alloc(sizeof(got));
  if (!d) return;
  SAPG_LAUNCH(mixed_blocks_kernel, NB, NT, stream)(d);
  if (dev_to(got, d, sizeof(got))) {
    int bad = 0;
    for (int i = 0; i < N; i++) {
      int b = i / NT, j = b * NT + (i % NT + 1) % NT;
      bad += got[i] != (b % 3 == 1 ? j * j : -i);
    }
    CHECK(!bad, "%d of %d threads wrote the wrong value", bad, N);
  }
  cudaFree(d);
}

/* ---- __syncthreads_count/_and/_or, votes ---- */
static __global__ void vote_kernel(int* out) {
  unsigned t = threadIdx.x;
  int c = __syncthreads_count(t % 3 == 0);
  int a = __syncthreads_and(t < 1000);
  int o = __syncthreads_or(t == 5);
  int z = __syncthreads_or(0);
  unsigned ballot = __ballot_sync(0xffffffffu, t & 1);
  int all = __all_sync(0xffffffffu, t < 1000), any = __any_sync(0xffffffffu, t == 40);
  if (t % 32 == 0) {
    int w = (int)(t / 32);
    out[6 * w + 0] = c;
    out[6 * w + 1] = a;
    out[6 * w + 2] = o + 2 * z;
    out[6 * w + 3] = (int)ballot;
    out[6 * w + 4] = all;
    out[6 * w + 5] = any;
  }
}

static void test_votes(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { NT = 64 };
  int got[12];
  int* d = (int*)dev_alloc(sizeof(got));
  if (!d) return;
  SAPG_LAUNCH(vote_kernel, 1, NT, stream)(d);
  if (dev_to(got, d, sizeof(got)))
    for (int w = 0; w < 2; w++) {
      const int* g = got + 6 * w;
      CHECK(g[0] == 22, "warp %d: __syncthreads_count %d, want 22", w, g[0]);
      CHECK(g[1] == 1 && g[2] == 1, "warp %d: __syncthreads_and %d _or %d", w, g[1], g[2]);
      CHECK((unsigned)g[3] == 0xAAAAAAAAu, "warp %d: ballot 0x%08x", w, (unsigned)g[3]);
      CHECK(g[4] == 1 && g[5] == (w == 1), "warp %d: all %d any %d", w, g[4], g[5]);
    }
  cudaFree(d);
}

/* ---- warp shuffles: down-reduction per warp then across warps through shared
 * memory (float, double, int); xor butterfly (every lane gets the sum); up-scan ---- */
template <typename T>
static __device__ T warp_sum_down(T v) {
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

static __global__ void shuffle_kernel(const float* xf, const double* xd, const int* xi, float* sf,
                                      double* sd, int* si, int* xor_ok, int* scan) {
  __shared__ float wf[32];
  __shared__ double wd[32];
  __shared__ int wi[32];
  unsigned t = threadIdx.x, lane = t % warpSize, warp = t / warpSize;
  unsigned nwarp = blockDim.x / warpSize;
  unsigned i = blockIdx.x * blockDim.x + t;
  float f = warp_sum_down(xf[i]);
  double d = warp_sum_down(xd[i]);
  int k = warp_sum_down(xi[i]);
  if (lane == 0) {
    wf[warp] = f;
    wd[warp] = d;
    wi[warp] = k;
  }
  __syncthreads();
  if (warp == 0) {
    f = lane < nwarp ? wf[lane] : 0.0f;
    d = lane < nwarp ? wd[lane] : 0.0;
    k = lane < nwarp ? wi[lane] : 0;
    f = warp_sum_down(f);
    d = warp_sum_down(d);
    k = warp_sum_down(k);
    if (lane == 0) {
      sf[blockIdx.x] = f;
      sd[blockIdx.x] = d;
      si[blockIdx.x] = k;
    }
  }
  /* butterfly: every lane ends with its warp's sum, the same one lane 0 found */
  int b = xi[i];
  for (int m = 1; m < warpSize; m *= 2) b += __shfl_xor_sync(0xffffffffu, b, m);
  int ref = __shfl_sync(0xffffffffu, b, 0);
  xor_ok[i] = b == ref && (lane != 0 || b == wi[warp]);
  /* inclusive prefix sum over the warp */
  int s = xi[i];
  for (int o = 1; o < warpSize; o *= 2) {
    int u = __shfl_up_sync(0xffffffffu, s, o);
    if ((int)lane >= o) s += u;
  }
  scan[i] = s;
}

static void test_warp_shuffles(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { NT = 128, NB = 3, N = NT * NB };
  float xf[N];
  double xd[N];
  int xi[N], xor_ok[N], scan[N], si[NB], want_i[NB] = {0};
  float sf[NB];
  double sd[NB], want_f[NB] = {0}, want_d[NB] = {0}, got_f[NB];
  for (int i = 0; i < N; i++) {
    xf[i] = (float)check_uniform(-1, 1);
    xd[i] = check_uniform(-1, 1);
    xi[i] = (int)check_uniform(-1000, 1000);
    want_f[i / NT] += xf[i];
    want_d[i / NT] += xd[i];
    want_i[i / NT] += xi[i];
  }
  float* dxf = (float*)dev_from(xf, sizeof(xf));
  double* dxd = (double*)dev_from(xd, sizeof(xd));
  int* dxi = (int*)dev_from(xi, sizeof(xi));
  float* dsf = (float*)dev_alloc(sizeof(sf));
  double* dsd = (double*)dev_alloc(sizeof(sd));
  int* dsi = (int*)dev_alloc(sizeof(si));
  int* dok = (int*)dev_alloc(sizeof(xor_ok));
  int* dscan = (int*)dev_alloc(sizeof(scan));
  if (!dxf || !dxd || !dxi || !dsf || !dsd || !dsi || !dok || !dscan) return;
  SAPG_LAUNCH(shuffle_kernel, NB, NT, stream)(dxf, dxd, dxi, dsf, dsd, dsi, dok, dscan);
  if (dev_to(sf, dsf, sizeof(sf)) && dev_to(sd, dsd, sizeof(sd)) && dev_to(si, dsi, sizeof(si)) &&
      dev_to(xor_ok, dok, sizeof(xor_ok)) && dev_to(scan, dscan, sizeof(scan))) {
    for (int b = 0; b < NB; b++) got_f[b] = sf[b];
    check_arrays("float block sums", got_f, want_f, NB, 1e-4, 1e-5);
    check_arrays("double block sums", sd, want_d, NB, 1e-12, 1e-12);
    for (int b = 0; b < NB; b++)
      CHECK(si[b] == want_i[b], "int block %d: %d want %d", b, si[b], want_i[b]);
    int bad_xor = 0, bad_scan = 0, run = 0;
    for (int i = 0; i < N; i++) {
      run = (i % 32 == 0 ? 0 : run) + xi[i];
      bad_xor += !xor_ok[i];
      if (scan[i] != run && !bad_scan++) CHECK(0, "scan[%d] = %d want %d", i, scan[i], run);
    }
    CHECK(!bad_xor, "%d lanes: xor butterfly sum differs from the warp sum", bad_xor);
  }
  cudaFree(dxf); cudaFree(dxd); cudaFree(dxi); cudaFree(dsf); cudaFree(dsd); cudaFree(dsi);
  cudaFree(dok); cudaFree(dscan);
}

/* a 48-thread block: warp 1 has 16 lanes and reduces over mask 0xffff, width 16 */
static __global__ void partial_warp_kernel(const int* x, int* out) {
  unsigned t = threadIdx.x;
  int v = x[t];
  if (t < 32) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  } else {
    for (int o = 8; o > 0; o /= 2) v += __shfl_down_sync(0x0000ffffu, v, o, 16);
  }
  __syncwarp(t < 32 ? 0xffffffffu : 0x0000ffffu);
  if (t % 32 == 0) out[t / 32] = v;
}

static void test_partial_warp(void) {
  if (!device_ok()) SKIP("no GPU");
  int x[48], got[2], want[2] = {0, 0};
  for (int t = 0; t < 48; t++) {
    x[t] = t * t - 20;
    want[t / 32] += x[t];
  }
  int* dx = (int*)dev_from(x, sizeof(x));
  int* d = (int*)dev_alloc(sizeof(got));
  if (!dx || !d) return;
  SAPG_LAUNCH(partial_warp_kernel, 1, 48, stream)(dx, d);
  if (dev_to(got, d, sizeof(got)))
    for (int w = 0; w < 2; w++) CHECK(got[w] == want[w], "warp %d: %d want %d", w, got[w], want[w]);
  cudaFree(dx);
  cudaFree(d);
}

/* ---- dynamic shared memory: a float array then an int array in one buffer (reverse
 * each block's segment, count through shared atomics); a second kernel declares it
 * with another type ---- */
static __global__ void dyn_reverse_kernel(const float* x, float* out, int* counts) {
  SAPG_DYNAMIC_SHARED(float, s);
  unsigned t = threadIdx.x, n = blockDim.x, i = blockIdx.x * n + t;
  int* cnt = (int*)(s + n);
  if (t == 0) cnt[0] = 0;
  s[t] = x[i];
  __syncthreads();
  out[i] = s[n - 1 - t];
  atomicAdd(&cnt[0], (int)t);
  __syncthreads();
  if (t == 0) counts[blockIdx.x] = cnt[0];
}

static __global__ void dyn_double_kernel(double* out) {
  SAPG_DYNAMIC_SHARED(double, s);
  unsigned t = threadIdx.x, n = blockDim.x;
  s[t] = (double)(blockIdx.x * 1000 + t) * 0.5;
  __syncthreads();
  out[blockIdx.x * n + t] = s[(t + 5) % n];
}

static void test_dynamic_shared(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { NT = 96, NB = 4, N = NT * NB };
  float x[N], got[N];
  int counts[NB];
  double dout[N];
  for (int i = 0; i < N; i++) x[i] = (float)i * 0.25f;
  float* dx = (float*)dev_from(x, sizeof(x));
  float* dy = (float*)dev_alloc(sizeof(got));
  int* dc = (int*)dev_alloc(sizeof(counts));
  double* dd = (double*)dev_alloc(sizeof(dout));
  if (!dx || !dy || !dc || !dd) return;
  SAPG_LAUNCH_SHARED(dyn_reverse_kernel, NB, NT, NT * sizeof(float) + sizeof(int), stream)(dx, dy, dc);
  if (dev_to(got, dy, sizeof(got)) && dev_to(counts, dc, sizeof(counts))) {
    int bad = 0;
    for (int b = 0; b < NB; b++) {
      for (int t = 0; t < NT; t++) bad += got[b * NT + t] != x[b * NT + NT - 1 - t];
      CHECK(counts[b] == NT * (NT - 1) / 2, "block %d: shared atomic count %d", b, counts[b]);
    }
    CHECK(!bad, "%d elements not reversed", bad);
  }
  SAPG_LAUNCH_SHARED(dyn_double_kernel, NB, NT, NT * sizeof(double), stream)(dd);
  if (dev_to(dout, dd, sizeof(dout))) {
    int bad = 0;
    for (int b = 0; b < NB; b++)
      for (int t = 0; t < NT; t++)
        bad += dout[b * NT + t] != (double)(b * 1000 + (t + 5) % NT) * 0.5;
    CHECK(!bad, "%d elements wrong through double dynamic shared memory", bad);
  }
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dc);
  cudaFree(dd);
}

/* ---- global atomics from every thread of several blocks ---- */
static __global__ void atomic_kernel(const double* x, double* sd, float* sf, int* si,
                                     unsigned* umax) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(sd, x[i]);
  atomicAdd(sf, (float)x[i]);
  atomicAdd(si, 1);
  atomicMax(umax, i * 7u % 1000u);
  __threadfence();
  (void)__ldg(&x[i]);
}

static void test_atomics(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { NT = 64, NB = 5, N = NT * NB };
  double x[N], want = 0, sd = 0;
  float sf = 0;
  int si = 0;
  unsigned umax = 0, want_max = 0;
  for (int i = 0; i < N; i++) {
    x[i] = check_uniform(0, 1);
    want += x[i];
    if ((unsigned)i * 7u % 1000u > want_max) want_max = (unsigned)i * 7u % 1000u;
  }
  double* dx = (double*)dev_from(x, sizeof(x));
  double* dsd = (double*)dev_from(&sd, sizeof(sd));
  float* dsf = (float*)dev_from(&sf, sizeof(sf));
  int* dsi = (int*)dev_from(&si, sizeof(si));
  unsigned* dmax = (unsigned*)dev_from(&umax, sizeof(umax));
  if (!dx || !dsd || !dsf || !dsi || !dmax) return;
  SAPG_LAUNCH(atomic_kernel, NB, NT, stream)(dx, dsd, dsf, dsi, dmax);
  if (dev_to(&sd, dsd, sizeof(sd)) && dev_to(&sf, dsf, sizeof(sf)) &&
      dev_to(&si, dsi, sizeof(si)) && dev_to(&umax, dmax, sizeof(umax))) {
    CHECK_CLOSE(sd, want, 1e-10, 1e-12, "double atomicAdd");
    CHECK_CLOSE(sf, want, 1e-3, 1e-4, "float atomicAdd");
    CHECK(si == N, "int atomicAdd: %d want %d", si, N);
    CHECK(umax == want_max, "atomicMax: %u want %u", umax, want_max);
  }
  cudaFree(dx); cudaFree(dsd); cudaFree(dsf); cudaFree(dsi); cudaFree(dmax);
}

/* ---- a kernel without barriers still runs every thread (the fast path) ---- */
static __global__ void plain_kernel(int n, int* out) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  out[i] = i * 3 + (int)blockDim.x;
}

static void test_plain_kernel(void) {
  if (!device_ok()) SKIP("no GPU");
  enum { N = 100000, NT = 128 };
  int* out = (int*)malloc(N * sizeof(int));
  int* d = (int*)dev_alloc(N * sizeof(int));
  if (!out || !d) { free(out); return; }
  SAPG_LAUNCH(plain_kernel, sapg_blocks(N, NT), NT, stream)(N, d);
  if (dev_to(out, d, N * sizeof(int))) {
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != i * 3 + NT;
    CHECK(!bad, "%d of %d threads wrote the wrong value", bad, N);
  }
  free(out);
  cudaFree(d);
}

/* ---- launches a device refuses: the error comes from cudaGetLastError ---- */
static __global__ void touch_kernel(int* out) { out[threadIdx.x] = 1; }

static void test_launch_errors(void) {
  if (!device_ok()) SKIP("no GPU");
  int zero = 0, got = 0;
  int* d = (int*)dev_from(&zero, sizeof(zero));
  if (!d) return;
  (void)cudaGetLastError();
  SAPG_LAUNCH(touch_kernel, 1, 2048, stream)(d);
  CHECK(cudaGetLastError() != cudaSuccess, "a 2048-thread block launched");
  SAPG_LAUNCH_SHARED(touch_kernel, 1, 1, 64 * 1024, stream)(d);
  CHECK(cudaGetLastError() != cudaSuccess, "64 KiB of dynamic shared memory launched");
  CHECK(cudaGetLastError() == cudaSuccess, "the launch error was not cleared");
  if (dev_to(&got, d, sizeof(got))) CHECK(got == 0, "a refused launch ran");
  cudaFree(d);
}

#ifdef SAP_CUDA_SHIM
/* ---- emulation only: undefined behaviour on a device is an abort with a message ---- */
static __global__ void early_exit_kernel(int* out) {
  __shared__ int s[64];
  if (threadIdx.x >= 3) return;  /* the others wait at the barrier forever */
  s[threadIdx.x] = 1;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % 3];
}

static __global__ void warp_exit_kernel(int* out) {
  int v = (int)threadIdx.x;
  if (threadIdx.x == 7) return;  /* lane 7 is named in the mask but never shuffles */
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

static __global__ void mismatch_kernel(int* out) {
  if (threadIdx.x < 16) __syncwarp();  /* waits for lanes 16-31, which wait at __syncthreads */
  else __syncthreads();
  out[threadIdx.x] = 1;
}

/* runs the launch in a child; it must abort with want in its stderr */
static void expect_abort(void (*launch)(int*), const char* want) {
  int* d = (int*)dev_alloc(64 * sizeof(int));
  int fds[2];
  if (!d || pipe(fds) != 0) { CHECK(0, "setup"); return; }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    launch(d);
    _exit(0);
  }
  close(fds[1]);
  char msg[2048];
  size_t len = 0;
  ssize_t r;
  while (len < sizeof(msg) - 1 && (r = read(fds[0], msg + len, sizeof(msg) - 1 - len)) > 0)
    len += (size_t)r;
  msg[len] = 0;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "the child did not abort (status %d)",
        status);
  CHECK(strstr(msg, want) != NULL, "message \"%s\" lacks \"%s\"", msg, want);
  cudaFree(d);
}
static void launch_early_exit(int* d) { SAPG_LAUNCH(early_exit_kernel, 1, 64, stream)(d); }
static void launch_warp_exit(int* d) { SAPG_LAUNCH(warp_exit_kernel, 1, 32, stream)(d); }
static void launch_mismatch(int* d) { SAPG_LAUNCH(mismatch_kernel, 1, 32, stream)(d); }

static void test_undefined_aborts(void) {
  expect_abort(launch_early_exit, "returned (first: thread 3) while 3 wait at __syncthreads");
  expect_abort(launch_warp_exit, "waits for lane 7 (thread 7), which returned");
  expect_abort(launch_mismatch, "deadlock");
}
#endif

int main(void) {
  RUN(test_block_reduction);
  RUN(test_neighbour_exchange);
  RUN(test_mixed_blocks);
  RUN(test_votes);
  RUN(test_warp_shuffles);
  RUN(test_partial_warp);
  RUN(test_dynamic_shared);
  RUN(test_atomics);
  RUN(test_plain_kernel);
  RUN(test_launch_errors);
#ifdef SAP_CUDA_SHIM
  RUN(test_undefined_aborts);
  return check_summary("test_shim (CUDA emulated on the CPU)");
#else
  return check_summary("test_shim (GPU)");
#endif
}
