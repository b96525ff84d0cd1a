// Vector building blocks for the CPU kernels: GCC/Clang vector extensions.
//
// ATen's at::vec::Vectorized is not available to the stable-ABI build (the
// kernels include no torch header), and plain loops calling the scalar
// conversions in scalar.h do not vectorise (branches, memcpy bit casts). So
// the kernels are written over explicit vectors of the target's register
// width: 16 floats (8 doubles) with AVX-512, 8 with AVX2, 4 with SSE2 or
// NEON. Wider vectors than the registers looked equivalent but were not:
// GCC 12 lowered a comparison or `?:` of a 64-byte vector element by element
// on AVX2 and SSE2, and split the rest through stack round trips that
// stalled store forwarding (silu_and_mul ran at 3.4 ns per element, 2.6x
// torch.compile's time, on an AVX2 machine).
//
// This header is included by each isa_*.cpp file after its `#pragma GCC
// target`, inside a per-ISA namespace, so every function here is compiled
// once per instruction set. It must not include any header itself: a
// standard-library inline function instantiated under an AVX-512 pragma could
// be picked by the linker for the baseline build too (one COMDAT copy), and
// that copy would crash a CPU without AVX-512.
//
// Conversions match scalar.h bit for bit (round to nearest even, NaN stays
// NaN), so a row's vector body and its scalar tail agree.

// Vectors wider than 16 bytes are passed in memory without AVX, and GCC warns
// that the calling convention differs by target. Every function taking or
// returning one is always_inline, so no call crosses that boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

// The kernels keep NaN and inf (bf16_round_high, vexp): a build that lets the
// compiler assume there are none (-ffinite-math-only, -ffast-math) would
// return wrong results silently.
#if defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__
#error "fusedops's CPU kernels must not be built with -ffinite-math-only or -ffast-math"
#endif

#if defined(FUSEDOPS_ISA_AVX512)
constexpr int kVectorBytes = 64;
#elif defined(FUSEDOPS_ISA_AVX2)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif

using vf = float __attribute__((vector_size(kVectorBytes)));
using vi = int32_t __attribute__((vector_size(kVectorBytes)));
using vu = uint32_t __attribute__((vector_size(kVectorBytes)));
using vd = double __attribute__((vector_size(kVectorBytes)));
using vu16 = uint16_t __attribute__((vector_size(kVectorBytes / 2)));  // bf16 bits of a vf

constexpr int kFloatLanes = kVectorBytes / 4;
constexpr int kDoubleLanes = kVectorBytes / 8;

// Bit casts between same-sized vectors: a cast of a vector is a reinterpretation.
__attribute__((always_inline)) inline vf as_float(vu v) { return (vf)v; }
__attribute__((always_inline)) inline vu as_uint(vf v) { return (vu)v; }

template <typename V>
__attribute__((always_inline)) inline V load_raw(const void* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof(V));  // unaligned load
  return v;
}
template <typename V>
__attribute__((always_inline)) inline void store_raw(void* p, V v) {
  __builtin_memcpy(p, &v, sizeof(V));
}

// ---- float <-> storage, kFloatLanes at a time -------------------------------
__attribute__((always_inline)) inline vf load_floats(const float* p) { return load_raw<vf>(p); }
__attribute__((always_inline)) inline void store_floats(float* p, vf v) { store_raw(p, v); }

// bf16 -> float is the 16 bits moved to the top of a float; float -> bf16
// rounds to nearest even in the top 16 bits. The result keeps the bf16 in the
// top half of each lane (the low half is garbage), and NaN is the quiet NaN
// 0x7fc0 whatever its payload, as in scalar.h (the rounding bias added to a
// NaN with a full payload would carry into the sign bit and make it a zero).
// `v != v` is true exactly for NaN: one compare, where testing the bits takes
// three (cache-hot bf16 rms_norm 0.233 against 0.219 ns per element). The
// compiler may only assume no NaN under -ffinite-math-only, which the #error
// at the top of this file refuses.
__attribute__((always_inline)) inline vu bf16_round_high(vf v) {
  const vu u = as_uint(v);
  const vu rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return (vi)(v != v) ? vu{} + 0x7fc00000u : rounded;
}

#if defined(FUSEDOPS_ISA_AVX512)
// GCC 12 widens uint16 to uint32 in pieces (6 instructions for 16 values on
// AVX-512, 6 for 8 on AVX2) and narrows through a permute or a redundant
// mask; the instructions made for it take 1 each way (3 on AVX2's narrowing).
__attribute__((always_inline)) inline vf load_floats(const BFloat16* p) {
  const __m512i wide =
      _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return as_float((vu)wide << 16);
}
__attribute__((always_inline)) inline void store_floats(BFloat16* p, vf v) {
  const __m512i high = (__m512i)(bf16_round_high(v) >> 16);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(high));
}
#elif defined(FUSEDOPS_ISA_AVX2)
__attribute__((always_inline)) inline vf load_floats(const BFloat16* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return as_float((vu)wide << 16);
}
__attribute__((always_inline)) inline void store_floats(BFloat16* p, vf v) {
  const __m256i low = (__m256i)(bf16_round_high(v) >> 16);  // < 2^16: packus is exact
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(low, low), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}
#else
__attribute__((always_inline)) inline vf load_floats(const BFloat16* p) {
  const vu wide = __builtin_convertvector(load_raw<vu16>(p), vu);
  return as_float(wide << 16);
}
__attribute__((always_inline)) inline void store_floats(BFloat16* p, vf v) {
  store_raw(p, __builtin_convertvector(bf16_round_high(v) >> 16, vu16));
}
#endif

#if defined(FUSEDOPS_ISA_AVX512)
// F16C/AVX-512 convert halves in one instruction; the compiler's own lowering
// of a _Float16 vector conversion is element by element (checked with -S).
__attribute__((always_inline)) inline vf load_floats(const Half* p) {
  return (vf)_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
__attribute__((always_inline)) inline void store_floats(Half* p, vf v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      _mm512_cvtps_ph((__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#elif defined(FUSEDOPS_ISA_AVX2)
__attribute__((always_inline)) inline vf load_floats(const Half* p) {
  return (vf)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
__attribute__((always_inline)) inline void store_floats(Half* p, vf v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#else
// No half-precision instructions assumed: the exact scalar conversions.
__attribute__((always_inline)) inline vf load_floats(const Half* p) {
  vf v;
  for (int i = 0; i < kFloatLanes; ++i) v[i] = to_float(p[i]);
  return v;
}
__attribute__((always_inline)) inline void store_floats(Half* p, vf v) {
  for (int i = 0; i < kFloatLanes; ++i) p[i] = from_float_half(v[i]);
}
#endif

// ---- two vectors at a time, lanes in any agreed order ---------------------
// An element-wise loop may hold a stretch of 2 * kFloatLanes elements in its
// two vectors in any order, as long as every operand is loaded and the result
// stored the same way. bf16 uses that: one load of 2 * kFloatLanes values
// splits into the even elements (shifted up) and the odd ones (masked, already
// in place), and the store rounds both and merges them back (blend_halves).
// That is 3 instructions per 16 values each way on AVX2, against 2 and 4 per 8
// for the ordered conversions above. Sums over such a stretch add the same
// terms in another order.
template <typename V>
struct Pair {
  V v0, v1;
};
using vf2 = Pair<vf>;

template <typename T>
__attribute__((always_inline)) inline vf2 load_pair(const T* p) {
  return {load_floats(p), load_floats(p + kFloatLanes)};
}
template <typename T>
__attribute__((always_inline)) inline void store_pair(T* p, vf2 v) {
  store_floats(p, v.v0);
  store_floats(p + kFloatLanes, v.v1);
}

__attribute__((always_inline)) inline vf2 load_pair(const BFloat16* p) {
  const vu both = load_raw<vu>(p);  // element 2k in the low half of lane k, 2k+1 in the high
  return {as_float(both << 16), as_float(both & 0xffff0000u)};
}

// The low 16 bits of each 32-bit lane from `low`, the high 16 from `high`:
// one blend on AVX2 and AVX-512; SSE2 has no 16-bit blend, so a mask and an
// or there (NEON: one bit select).
__attribute__((always_inline)) inline vu blend_halves(vu low, vu high) {
#if defined(FUSEDOPS_ISA_AVX512)
  return (vu)_mm512_mask_blend_epi16(0xAAAAAAAAu, (__m512i)low, (__m512i)high);
#elif defined(FUSEDOPS_ISA_AVX2)
  return (vu)_mm256_blend_epi16((__m256i)low, (__m256i)high, 0xAA);
#else
  return (low & 0xffffu) | (high & 0xffff0000u);
#endif
}
__attribute__((always_inline)) inline void store_pair(BFloat16* p, vf2 v) {
#if defined(FUSEDOPS_ISA_AVX512BF16)
  // vcvtne2ps2bf16 rounds to nearest even as bf16_round_high does, but reads
  // subnormal inputs as zero and keeps a NaN's payload: a pair with either
  // (fpclass: quiet or signalling NaN, subnormal) takes the bit arithmetic,
  // so the bits stay scalar.h's. Its result holds v0's 16 values, then v1's;
  // vpermw interleaves them back into the even/odd order of load_pair. On a
  // 2-vCPU AMD EPYC (Zen 5): the cache-resident bf16 silu forward 15% faster
  // (NOTES.md, v24). fpclass follows MXCSR's denormals-are-zero: a thread that
  // sets DAZ without flush-to-zero would see a subnormal result rounded to
  // zero here and to a bf16 subnormal by the scalar tail. torch sets both or
  // neither (torch.set_flush_denormal), and with both no subnormal exists.
  constexpr int kSpecial = 0x01 | 0x20 | 0x80;  // QNaN, subnormal, SNaN
  const __mmask16 special = _mm512_fpclass_ps_mask((__m512)v.v0, kSpecial) |
                            _mm512_fpclass_ps_mask((__m512)v.v1, kSpecial);
  if (__builtin_expect(special == 0, 1)) {
    const __m512i halves = (__m512i)_mm512_cvtne2ps_pbh((__m512)v.v1, (__m512)v.v0);
    const __m512i interleave =
        _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                         21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    store_raw(p, (vu)_mm512_permutexvar_epi16(interleave, halves));
    return;
  }
#endif
  store_raw(p, blend_halves(bf16_round_high(v.v0) >> 16, bf16_round_high(v.v1)));
}

// ---- double, kDoubleLanes at a time -----------------------------------------
__attribute__((always_inline)) inline vd load_doubles(const double* p) { return load_raw<vd>(p); }
__attribute__((always_inline)) inline void store_doubles(double* p, vd v) { store_raw(p, v); }

// Sum of the lanes, in double (the float lanes each hold a short partial sum).
__attribute__((always_inline)) inline double hsum(vf v) {
  double s = 0;
  for (int i = 0; i < kFloatLanes; ++i) s += static_cast<double>(v[i]);
  return s;
}
__attribute__((always_inline)) inline double hsum(vd v) {
  double s = 0;
  for (int i = 0; i < kDoubleLanes; ++i) s += v[i];
  return s;
}

// ---- exp ---------------------------------------------------------------------
// exp(x) for float lanes, within a few ulp, with the edge cases silu needs:
// exp(NaN) = NaN, exp(x) = +inf above 127.5*ln2 (true overflow is at 128*ln2;
// silu only uses 1/(1 + exp(-a)), which is 0 either way), exp(x) = 0 below
// -126*ln2 (flushes what would be subnormal). Libm's expf is a call per
// element, which stops vectorisation.
//   x = k*ln2 + r, |r| <= ln2/2; exp(r) by its Taylor series to r^7 (the next
//   term is < 7e-9 relative, under float's 6e-8 epsilon); 2^k built from bits.
__attribute__((always_inline)) inline vf vexp(vf x) {
  constexpr float kHi = 88.3762626f;  // 127.5 * ln2: k stays <= 127
  constexpr float kLo = -87.33654f;   // 2^-126: smallest normal
  const vi over = (vi)(x > kHi);
  const vi under = (vi)(x < kLo);
  vf xc = over ? vf{} + kHi : x;  // NaN compares false: it stays NaN
  xc = under ? vf{} + kLo : xc;
  // Round x/ln2 to an integer with the 1.5*2^23 trick: the sum's low mantissa
  // bits are the integer, no float->int conversion (undefined for NaN).
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  const vf t = xc * 1.44269504088896341f + kShift;
  const vf k = t - kShift;
  const vi ki = (vi)as_uint(t) - (vi)as_uint(vf{} + kShift);
  // ln2 split in two so k*ln2_hi is exact for |k| <= 2^9.
  vf r = xc - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  vf p = vf{} + (1.0f / 5040.0f);
  p = p * r + (1.0f / 720.0f);
  p = p * r + (1.0f / 120.0f);
  p = p * r + (1.0f / 24.0f);
  p = p * r + (1.0f / 6.0f);
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const vf scale = as_float((vu)((ki + 127) << 23));
  vf y = p * scale;
  y = over ? vf{} + __builtin_inff() : y;
  y = under ? vf{} : y;
  return y;
}
