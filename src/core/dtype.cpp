#include "core/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace kbench {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  if (name == "float32" || name == "f32" || name == "fp32") return DType::f32;
  if (name == "float16" || name == "f16" || name == "fp16" || name == "half") return DType::f16;
  if (name == "bfloat16" || name == "bf16") return DType::bf16;
  throw UsageError("unknown dtype '" + std::string(name) +
                   "' (expected float32, float16 or bfloat16)");
}

std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }

double dtype_max(DType t) {
  switch (t) {
    case DType::f32: return std::ldexp(0x1.fffffep0, 127);
    case DType::f16: return 65504.0;
    case DType::bf16: return std::ldexp(0x1.fep0, 127);
  }
  return 0;
}

double dtype_epsilon(DType t) {
  switch (t) {
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::f16: return std::ldexp(1.0, -11);
    case DType::bf16: return std::ldexp(1.0, -8);
  }
  return 0;
}

std::uint16_t float_to_bf16_bits(float f) {
  auto u = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // keep it a NaN
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest, ties to even
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_bits_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

std::uint16_t float_to_half_bits(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (u >> 16) & 0x8000;
  const std::uint32_t abs = u & 0x7fffffff;
  if (abs >= 0x7f800000)  // inf or NaN
    return static_cast<std::uint16_t>(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  if (abs >= 0x477ff000)  // rounds to above 65504: infinity
    return static_cast<std::uint16_t>(sign | 0x7c00);
  if (abs < 0x38800000) {  // below 2^-14: subnormal half (or zero)
    // Scale so that the half subnormal unit (2^-24) becomes 1, then round to nearest even
    // using the float hardware's own rounding.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // 2^24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  std::uint32_t h = abs - 0x38000000;
  h += 0xfff + ((h >> 13) & 1);
  return static_cast<std::uint16_t>(sign | (h >> 13));
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1f;
  const std::uint32_t man = h & 0x3ff;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (man << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

std::vector<std::byte> encode(DType t, std::vector<double>& values) {
  std::vector<std::byte> out(values.size() * dtype_size(t));
  double* const v = values.data();
  std::byte* const o = out.data();
  parallel_pieces(static_cast<std::int64_t>(values.size()), kParallelGrain,
                  [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const float f = static_cast<float>(v[i]);
      if (t == DType::f32) {
        std::memcpy(o + i * 4, &f, 4);
        v[i] = f;
        continue;
      }
      const std::uint16_t bits = t == DType::f16 ? float_to_half_bits(f) : float_to_bf16_bits(f);
      std::memcpy(o + i * 2, &bits, 2);
      v[i] = t == DType::f16 ? half_bits_to_float(bits) : bf16_bits_to_float(bits);
    }
  });
  return out;
}

std::vector<double> decode(DType t, const std::vector<std::byte>& bytes) {
  return decode(t, bytes.data(), bytes.size() / dtype_size(t));
}

double decode_one(DType t, const std::byte* data, std::int64_t k) {
  if (t == DType::f32) {
    float f;
    std::memcpy(&f, data + k * 4, 4);
    return f;
  }
  std::uint16_t bits;
  std::memcpy(&bits, data + k * 2, 2);
  return t == DType::f16 ? half_bits_to_float(bits) : bf16_bits_to_float(bits);
}

std::vector<double> decode(DType t, const std::byte* const b, std::size_t n) {
  std::vector<double> out(n);
  double* const o = out.data();
  parallel_pieces(static_cast<std::int64_t>(n), kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) o[i] = decode_one(t, b, i);
  });
  return out;
}

}  // namespace kbench
