// Element types. Device code uses float, __half and __nv_bfloat16; host code sees only this
// enum and the raw bits, converted here so that no host file needs the CUDA fp16 headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

enum class DType { f32, f16, bf16 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16};

std::string_view dtype_name(DType t);           // "float32", "float16", "bfloat16"
DType parse_dtype(std::string_view name);       // accepts the names above and f32/fp16/bf16...
std::size_t dtype_size(DType t);

// Unit roundoff of the type (2^-24, 2^-11, 2^-8): tolerances are written in these units.
double dtype_epsilon(DType t);
// The largest finite value of the type (3.4e38, 65504, 3.39e38): the ceiling of large inputs.
double dtype_max(DType t);

// Round-to-nearest-even conversions between float and the 16-bit formats' bits.
std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t b);

// Encode doubles as `t` into raw bytes (rounding to the type), and decode them back.
// encode() also rewrites `values` to what the type can hold, so an oracle fed with them
// sees exactly the inputs the kernel sees.
std::vector<std::byte> encode(DType t, std::vector<double>& values);
std::vector<double> decode(DType t, const std::vector<std::byte>& bytes);
// The first n values at data (n x dtype_size(t) bytes).
std::vector<double> decode(DType t, const std::byte* data, std::size_t n);
// Value k of the array of t at data.
double decode_one(DType t, const std::byte* data, std::int64_t k);

}  // namespace kbench
