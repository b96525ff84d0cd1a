// The row kernels, written once and compiled per ISA (see isa.h and simd.h).
//
// Included by isa_*.cpp inside `namespace fusedops::kernels::cpu::<isa>` after
// that file's `#pragma GCC target`; like simd.h it includes nothing itself.
//
// Numerics: a row's sums (sum of squares, sum of w*dy*x) are accumulated in
// 2 or 4 vectors of 4-16 float lanes (the ISA's width, simd.h) over blocks of
// kBlock elements, and each block's total is added into a double. So each
// float lane adds at most kBlock / (2*4) = 128 terms, and the double carries
// the rest: a row of 2^26
// ones sums exactly, and rows of large-mean data (1000 + noise) keep float
// precision however long they are. A single float running sum, as before,
// stops growing once it reaches 2^24 times the terms it adds.

#include "simd.h"

template <typename T>
struct VecOps {
  // float, Half, BFloat16: kFloatLanes float lanes (the ISA's width).
  using V = vf;
  using Acc = float;
  static constexpr int64_t kLanes = kFloatLanes;
  // always_inline, as everything taking or returning a vector (simd.h).
  __attribute__((always_inline)) static V load(const T* p) { return load_floats(p); }
  __attribute__((always_inline)) static void store(T* p, V v) { store_floats(p, v); }
  // 2 * kLanes elements in an order only load2 and store2 know (simd.h).
  __attribute__((always_inline)) static Pair<V> load2(const T* p) { return load_pair(p); }
  __attribute__((always_inline)) static void store2(T* p, Pair<V> v) { store_pair(p, v); }
};
template <>
struct VecOps<double> {
  using V = vd;
  using Acc = double;
  static constexpr int64_t kLanes = kDoubleLanes;
  __attribute__((always_inline)) static V load(const double* p) { return load_doubles(p); }
  __attribute__((always_inline)) static void store(double* p, V v) { store_doubles(p, v); }
  __attribute__((always_inline)) static Pair<V> load2(const double* p) {
    return {load(p), load(p + kLanes)};
  }
  __attribute__((always_inline)) static void store2(double* p, Pair<V> v) {
    store(p, v.v0);
    store(p + kLanes, v.v1);
  }
};

constexpr int64_t kBlock = 1024;  // elements per float partial sum (16-128 per lane)

// sum(x^2) over n elements, in double.
template <typename T>
double sum_squares(const T* x, int64_t n) {
  using O = VecOps<T>;
  using V = typename O::V;
  constexpr int64_t kStep = 4 * O::kLanes;
  const int64_t n_main = n / kStep * kStep;
  double total = 0;
  for (int64_t b = 0; b < n_main; b += kBlock) {
    const int64_t e = b + kBlock < n_main ? b + kBlock : n_main;
    V a0{}, a1{}, a2{}, a3{};
    for (int64_t i = b; i < e; i += kStep) {
      const Pair<V> p0 = O::load2(x + i), p1 = O::load2(x + i + 2 * O::kLanes);
      a0 += p0.v0 * p0.v0;
      a1 += p0.v1 * p0.v1;
      a2 += p1.v0 * p1.v0;
      a3 += p1.v1 * p1.v1;
    }
    total += hsum((a0 + a1) + (a2 + a3));
  }
  for (int64_t i = n_main; i < n; ++i) {
    const double v = load<double>(x[i]);
    total += v * v;
  }
  return total;
}

// rstd = 1 / sqrt(mean + eps), in double; the caller rounds it to Acc.
inline double rstd_of(double sum_sq, int64_t n, double eps) {
  return 1.0 / __builtin_sqrt(sum_sq / static_cast<double>(n) + eps);
}

// out[i] = x[i] * rstd * w[i]
template <typename T>
void scale_row(T* out, const T* x, const T* w, int64_t n, typename VecOps<T>::Acc rstd) {
  using O = VecOps<T>;
  using V = typename O::V;
  using Acc = typename O::Acc;
  constexpr int64_t L = O::kLanes;
  const V r = V{} + rstd;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const Pair<V> xv = O::load2(x + i), wv = O::load2(w + i);
    O::store2(out + i, {xv.v0 * r * wv.v0, xv.v1 * r * wv.v1});
  }
  for (; i + L <= n; i += L) {
    O::store(out + i, O::load(x + i) * r * O::load(w + i));
  }
  for (; i < n; ++i) {
    out[i] = Store<T>::from(load<Acc>(x[i]) * rstd * load<Acc>(w[i]));
  }
}

template <typename T>
void rms_norm_rows(void* out_v, const void* x_v, const void* w_v, int64_t begin, int64_t end,
                   int64_t hidden, double eps) {
  using Acc = typename VecOps<T>::Acc;
  T* out = static_cast<T*>(out_v);
  const T* x = static_cast<const T*>(x_v);
  const T* w = static_cast<const T*>(w_v);
  for (int64_t r = begin; r < end; ++r) {
    const T* xr = x + r * hidden;
    const Acc rstd = static_cast<Acc>(rstd_of(sum_squares(xr, hidden), hidden, eps));
    scale_row(out + r * hidden, xr, w, hidden, rstd);
  }
}

// residual_out = x + residual, rounded to T; returns sum(residual_out^2) of
// the rounded values (the norm is of what the caller gets back).
template <typename T>
double add_rows_sum_squares(T* s, const T* x, const T* res, int64_t n) {
  using O = VecOps<T>;
  using V = typename O::V;
  using Acc = typename O::Acc;
  const int64_t n_main = n / O::kLanes * O::kLanes;
  double total = 0;
  for (int64_t b = 0; b < n_main; b += kBlock) {
    const int64_t e = b + kBlock < n_main ? b + kBlock : n_main;
    V a0{}, a1{};
    int64_t i = b;
    for (; i + 2 * O::kLanes <= e; i += 2 * O::kLanes) {
      const Pair<V> xv = O::load2(x + i), rv = O::load2(res + i);
      O::store2(s + i, {xv.v0 + rv.v0, xv.v1 + rv.v1});
      // Re-read the stored (rounded) values: the store just forwarded them.
      const Pair<V> sv = O::load2(s + i);
      a0 += sv.v0 * sv.v0;
      a1 += sv.v1 * sv.v1;
    }
    for (; i < e; i += O::kLanes) {
      O::store(s + i, O::load(x + i) + O::load(res + i));
      const V v0 = O::load(s + i);
      a0 += v0 * v0;
    }
    total += hsum(a0 + a1);
  }
  for (int64_t i = n_main; i < n; ++i) {
    s[i] = Store<T>::from(load<Acc>(x[i]) + load<Acc>(res[i]));
    const double v = load<double>(s[i]);
    total += v * v;
  }
  return total;
}

template <typename T>
void fused_add_rms_norm_rows(void* out_v, void* res_out_v, const void* x_v, const void* res_v,
                             const void* w_v, int64_t begin, int64_t end, int64_t hidden,
                             double eps) {
  using Acc = typename VecOps<T>::Acc;
  T* out = static_cast<T*>(out_v);
  T* res_out = static_cast<T*>(res_out_v);
  const T* x = static_cast<const T*>(x_v);
  const T* res = static_cast<const T*>(res_v);
  const T* w = static_cast<const T*>(w_v);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t off = r * hidden;
    const double sum_sq = add_rows_sum_squares(res_out + off, x + off, res + off, hidden);
    const Acc rstd = static_cast<Acc>(rstd_of(sum_sq, hidden, eps));
    scale_row(out + off, res_out + off, w, hidden, rstd);
  }
}

// y = x * rstd * w, rstd = (mean(x^2) + eps)^-1/2
// dx = rstd * w*dy - x * rstd^3 * mean(w*dy*x)  [+ grad_extra]
// dw += dy * x * rstd
template <typename T>
void rms_norm_backward_rows(void* gx_v, void* dw_v, const void* dy_v, const void* extra_v,
                            const void* x_v, const void* w_v, int64_t begin, int64_t end,
                            int64_t hidden, double eps, bool prefetch) {
  using O = VecOps<T>;
  using V = typename O::V;
  using Acc = typename O::Acc;
  constexpr int64_t L = O::kLanes;
  T* gx = static_cast<T*>(gx_v);
  Acc* dw = static_cast<Acc*>(dw_v);
  const T* dy = static_cast<const T*>(dy_v);
  const T* extra = static_cast<const T*>(extra_v);
  const T* x = static_cast<const T*>(x_v);
  const T* w = static_cast<const T*>(w_v);
  const int64_t n = hidden;
  const int64_t n_main = n / L * L;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t off = r * hidden;
    const T* xr = x + off;
    const T* dyr = dy + off;
    // 16-bit rows prefetch the next row of x and dy during pass 1, so its
    // reads are under way while this row's pass 2 runs (benchmarks/NOTES.md,
    // v23). Cached rows got slower with it; float32 rows were no faster (two
    // rounds, in the noise), and v10's forward prefetch made them slower. The
    // last row of the call prefetches nothing: the next row is another task's.
    const bool prefetch_next = sizeof(T) == 2 && prefetch && r + 1 < end;
    // Pass 1: sum(x^2) and sum(w*dy*x), blocked as in sum_squares.
    double sum_sq = 0, sum_wdyx = 0;
    for (int64_t b = 0; b < n_main; b += kBlock) {
      const int64_t e = b + kBlock < n_main ? b + kBlock : n_main;
      V s0{}, s1{}, p0{}, p1{};
      int64_t i = b;
      for (; i + 2 * L <= e; i += 2 * L) {
        static_assert(2 * L * 2 <= 64, "one prefetch per 2 * L 16-bit elements");
        if (prefetch_next) {  // one of each per 2 * L elements, at most 64 bytes
          __builtin_prefetch(xr + hidden + i);
          __builtin_prefetch(dyr + hidden + i);
        }
        const Pair<V> xv = O::load2(xr + i), wv = O::load2(w + i), dyv = O::load2(dyr + i);
        s0 += xv.v0 * xv.v0;
        s1 += xv.v1 * xv.v1;
        p0 += wv.v0 * dyv.v0 * xv.v0;
        p1 += wv.v1 * dyv.v1 * xv.v1;
      }
      for (; i < e; i += L) {
        const V x0 = O::load(xr + i);
        s0 += x0 * x0;
        p0 += O::load(w + i) * O::load(dyr + i) * x0;
      }
      sum_sq += hsum(s0 + s1);
      sum_wdyx += hsum(p0 + p1);
    }
    for (int64_t i = n_main; i < n; ++i) {
      const double xv = load<double>(xr[i]);
      sum_sq += xv * xv;
      sum_wdyx += static_cast<double>(load<Acc>(w[i]) * load<Acc>(dyr[i])) * xv;
    }
    const double rstd_d = rstd_of(sum_sq, n, eps);
    const Acc rstd = static_cast<Acc>(rstd_d);
    const Acc coef = static_cast<Acc>(rstd_d * rstd_d * rstd_d * sum_wdyx / static_cast<double>(n));
    // Pass 2: grad_x and the weight-gradient row.
    T* gxr = gx + off;
    const T* er = extra != nullptr ? extra + off : nullptr;
    const V vr = V{} + rstd, vc = V{} + coef;
    for (int64_t i = 0; i < n_main; i += L) {
      const V xv = O::load(xr + i), dyv = O::load(dyr + i);
      V g = vr * (O::load(w + i) * dyv) - vc * xv;
      if (er != nullptr) g += O::load(er + i);
      O::store(gxr + i, g);
      V acc = load_raw<V>(dw + i);
      acc += dyv * xv * vr;
      store_raw(dw + i, acc);
    }
    for (int64_t i = n_main; i < n; ++i) {
      const Acc xv = load<Acc>(xr[i]), dyv = load<Acc>(dyr[i]);
      Acc g = rstd * (load<Acc>(w[i]) * dyv) - coef * xv;
      if (er != nullptr) g += load<Acc>(er[i]);
      gxr[i] = Store<T>::from(g);
      dw[i] += dyv * xv * rstd;
    }
  }
}

// ---- silu_and_mul ----------------------------------------------------------
template <typename Acc>
Acc sigmoid_scalar(Acc a) {
  return Acc(1) / (Acc(1) + std::exp(-a));
}

// silu(a) * b = a * b / (1 + exp(-a)), kFloatLanes at a time.
__attribute__((always_inline)) inline vf silu_mul(vf a, vf b) { return a * b / (1.0f + vexp(-a)); }

// The gradients {d/da, d/db} of silu(a) * b for an upstream gradient g.
__attribute__((always_inline)) inline vf2 silu_mul_grad(vf a, vf b, vf g) {
  const vf s = 1.0f / (1.0f + vexp(-a));
  return {g * b * s * (1.0f + a * (1.0f - s)), g * a * s};
}

// How far ahead the silu loops prefetch their inputs (with `prefetch`, isa.h).
// On a 2-vCPU AMD EPYC (Zen 5) the hardware's own prefetch left the 16-bit
// forward waiting on memory: 2 KiB ahead it ran 19-23% faster at 4096 x 2·4096
// (NOTES.md, v24). Past the end of a tensor the address is only a hint (a
// prefetch never faults), so it is formed as an integer, not as a pointer
// past the tensor.
constexpr uintptr_t kPrefetchAheadBytes = 2048;

// One prefetch per 64-byte line of the stretch of 2 * kFloatLanes elements at
// p, kPrefetchAheadBytes ahead: two for float32 on AVX-512 (128 bytes a
// stretch), one for 16-bit there (64), and on narrower ISAs one for the
// stretch that starts in a line's first bytes.
template <typename T>
__attribute__((always_inline)) inline void prefetch_stretch(const T* p) {
  constexpr uintptr_t kStretch = 2 * kFloatLanes * sizeof(T);
  const uintptr_t at = reinterpret_cast<uintptr_t>(p) + kPrefetchAheadBytes;
  if constexpr (kStretch >= 64) {
    for (uintptr_t line = 0; line < kStretch; line += 64) {
      __builtin_prefetch(reinterpret_cast<const void*>(at + line));
    }
  } else if ((at & 63) < kStretch) {
    __builtin_prefetch(reinterpret_cast<const void*>(at));
  }
}

template <typename T, bool kPrefetch>
void silu_and_mul_row_range(T* out, const T* x, int64_t begin, int64_t end, int64_t d, int64_t c0,
                            int64_t c1) {
  using O = VecOps<T>;
  using Acc = typename O::Acc;
  for (int64_t r = begin; r < end; ++r) {
    const T* xa = x + r * 2 * d;
    const T* xb = xa + d;
    T* o = out + r * d;
    int64_t i = c0;
    if constexpr (!std::is_same_v<T, double>) {
      // float64 keeps libm's exp (the vector exp is float-accurate only).
      for (; i + 2 * O::kLanes <= c1; i += 2 * O::kLanes) {
        if constexpr (kPrefetch) {
          prefetch_stretch(xa + i);
          prefetch_stretch(xb + i);
        }
        const vf2 a = O::load2(xa + i), b = O::load2(xb + i);
        O::store2(o + i, {silu_mul(a.v0, b.v0), silu_mul(a.v1, b.v1)});
      }
      for (; i + O::kLanes <= c1; i += O::kLanes) {
        O::store(o + i, silu_mul(O::load(xa + i), O::load(xb + i)));
      }
    }
    for (; i < c1; ++i) {
      const Acc a = load<Acc>(xa[i]);
      o[i] = Store<T>::from(a * sigmoid_scalar(a) * load<Acc>(xb[i]));
    }
  }
}

template <typename T>
void silu_and_mul_rows(void* out, const void* x, int64_t begin, int64_t end, int64_t d, int64_t c0,
                       int64_t c1, bool prefetch) {
  auto* o = static_cast<T*>(out);
  const auto* xs = static_cast<const T*>(x);
  if (prefetch) {
    silu_and_mul_row_range<T, true>(o, xs, begin, end, d, c0, c1);
  } else {
    silu_and_mul_row_range<T, false>(o, xs, begin, end, d, c0, c1);
  }
}

// d/da silu(a) = s * (1 + a * (1 - s)) with s = sigmoid(a)
template <typename T, bool kPrefetch>
void silu_and_mul_backward_row_range(T* grad_x, const T* grad_out, const T* x, int64_t begin,
                                     int64_t end, int64_t d, int64_t c0, int64_t c1) {
  using O = VecOps<T>;
  using Acc = typename O::Acc;
  for (int64_t r = begin; r < end; ++r) {
    const T* xa = x + r * 2 * d;
    const T* xb = xa + d;
    const T* dy = grad_out + r * d;
    T* ga = grad_x + r * 2 * d;
    T* gb = ga + d;
    int64_t i = c0;
    if constexpr (!std::is_same_v<T, double>) {
      for (; i + 2 * O::kLanes <= c1; i += 2 * O::kLanes) {
        if constexpr (kPrefetch) {
          prefetch_stretch(xa + i);
          prefetch_stretch(xb + i);
          prefetch_stretch(dy + i);
        }
        const vf2 a = O::load2(xa + i), b = O::load2(xb + i), g = O::load2(dy + i);
        const vf2 d0 = silu_mul_grad(a.v0, b.v0, g.v0), d1 = silu_mul_grad(a.v1, b.v1, g.v1);
        O::store2(ga + i, {d0.v0, d1.v0});
        O::store2(gb + i, {d0.v1, d1.v1});
      }
      for (; i + O::kLanes <= c1; i += O::kLanes) {
        const vf2 d = silu_mul_grad(O::load(xa + i), O::load(xb + i), O::load(dy + i));
        O::store(ga + i, d.v0);
        O::store(gb + i, d.v1);
      }
    }
    for (; i < c1; ++i) {
      const Acc a = load<Acc>(xa[i]);
      const Acc b = load<Acc>(xb[i]);
      const Acc g = load<Acc>(dy[i]);
      const Acc s = sigmoid_scalar(a);
      ga[i] = Store<T>::from(g * b * s * (Acc(1) + a * (Acc(1) - s)));
      gb[i] = Store<T>::from(g * a * s);
    }
  }
}

template <typename T>
void silu_and_mul_backward_rows(void* gx_v, const void* dy_v, const void* x_v, int64_t begin,
                                int64_t end, int64_t d, int64_t c0, int64_t c1, bool prefetch) {
  auto* gx = static_cast<T*>(gx_v);
  const auto* dy = static_cast<const T*>(dy_v);
  const auto* x = static_cast<const T*>(x_v);
  // float32 was level with it (4096 x 2·4096) or no faster (4096 x 2·16384).
  if (prefetch && sizeof(T) == 2) {
    silu_and_mul_backward_row_range<T, true>(gx, dy, x, begin, end, d, c0, c1);
  } else {
    silu_and_mul_backward_row_range<T, false>(gx, dy, x, begin, end, d, c0, c1);
  }
}

template <typename T>
constexpr RowKernels row_kernels() {
  return RowKernels{rms_norm_rows<T>, fused_add_rms_norm_rows<T>, rms_norm_backward_rows<T>,
                    silu_and_mul_rows<T>, silu_and_mul_backward_rows<T>};
}

// Indexed by DType: kFloat32, kFloat16, kBFloat16, kFloat64.
constexpr RowKernels kTable[4] = {row_kernels<float>(), row_kernels<Half>(),
                                  row_kernels<BFloat16>(), row_kernels<double>()};
static_assert(static_cast<int>(DType::kFloat32) == 0 && static_cast<int>(DType::kFloat16) == 1 &&
                  static_cast<int>(DType::kBFloat16) == 2 && static_cast<int>(DType::kFloat64) == 3,
              "kTable is indexed by DType");
