// Host-side storage types for the CPU kernels and their float conversions.
//
// The kernel layer includes no torch header, so half and bfloat16 are plain
// 16-bit storage types here, converted with round-to-nearest-even exactly as
// torch does.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "../kernels.h"

namespace fusedops::kernels::cpu {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline float to_float(BFloat16 v) { return bits_float(static_cast<uint32_t>(v.bits) << 16); }

inline BFloat16 from_float_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return BFloat16{0x7fc0};  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);                               // round to nearest even
  return BFloat16{static_cast<uint16_t>(u >> 16)};
}

inline float to_float(Half v) {
  const uint32_t sign = static_cast<uint32_t>(v.bits & 0x8000u) << 16;
  uint32_t exp = (v.bits >> 10) & 0x1fu;
  uint32_t man = v.bits & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // inf / NaN
  if (exp == 0) {
    if (man == 0) return bits_float(sign);
    // Subnormal half: normalise into a float.
    int shift = 0;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      ++shift;
    }
    man &= 0x3ffu;
    exp = static_cast<uint32_t>(127 - 15 + 1 - shift);
    return bits_float(sign | (exp << 23) | (man << 13));
  }
  return bits_float(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

inline Half from_float_half(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return Half{static_cast<uint16_t>(sign | 0x7e00u)};   // NaN
  if (abs >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};  // overflow -> inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): add a magic number so the FPU rounds the
    // mantissa for us (round to nearest even), then take the low bits.
    const float magic = bits_float(0x3f000000u);  // 0.5 == 2^-1: aligns bit 0 with 2^-24
    const float r = bits_float(abs) + magic;
    return Half{static_cast<uint16_t>(sign | (float_bits(r) - float_bits(magic)))};
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even
  rounded -= (127u - 15u) << 23;
  return Half{static_cast<uint16_t>(sign | (rounded >> 13))};
}

// Uniform load/store in the accumulation type.
template <typename Acc>
inline Acc load(float v) {
  return static_cast<Acc>(v);
}
template <typename Acc>
inline Acc load(double v) {
  return static_cast<Acc>(v);
}
template <typename Acc>
inline Acc load(Half v) {
  return static_cast<Acc>(to_float(v));
}
template <typename Acc>
inline Acc load(BFloat16 v) {
  return static_cast<Acc>(to_float(v));
}

template <typename T>
struct Store;
template <>
struct Store<float> {
  static float from(double v) { return static_cast<float>(v); }
};
template <>
struct Store<double> {
  static double from(double v) { return v; }
};
template <>
struct Store<Half> {
  static Half from(double v) { return from_float_half(static_cast<float>(v)); }
};
template <>
struct Store<BFloat16> {
  static BFloat16 from(double v) { return from_float_bf16(static_cast<float>(v)); }
};

// float32 accumulation for every dtype but float64, as the ops document.
template <typename T>
struct AccType {
  using type = float;
};
template <>
struct AccType<double> {
  using type = double;
};

}  // namespace fusedops::kernels::cpu

// Runs `__VA_ARGS__` with `scalar_t` bound to the storage type of `dtype`.
#define FUSEDOPS_CPU_DISPATCH(dtype, ...)                                     \
  [&] {                                                                       \
    using ::fusedops::kernels::DType;                                         \
    switch (dtype) {                                                          \
      case DType::kFloat32: {                                                 \
        using scalar_t = float;                                               \
        return __VA_ARGS__();                                                 \
      }                                                                       \
      case DType::kFloat64: {                                                 \
        using scalar_t = double;                                              \
        return __VA_ARGS__();                                                 \
      }                                                                       \
      case DType::kFloat16: {                                                 \
        using scalar_t = ::fusedops::kernels::cpu::Half;                      \
        return __VA_ARGS__();                                                 \
      }                                                                       \
      case DType::kBFloat16: {                                                \
        using scalar_t = ::fusedops::kernels::cpu::BFloat16;                  \
        return __VA_ARGS__();                                                 \
      }                                                                       \
    }                                                                         \
    throw std::invalid_argument("fusedops: unsupported dtype in CPU kernel"); \
  }()
