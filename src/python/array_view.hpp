// Reading a tensor-like Python object (a PyTorch tensor, a CuPy or NumPy array) as kbench's check
// needs it: where its elements are and how to turn them into doubles. Two protocols, so that the
// module imports no framework: DLPack (__dlpack__, which PyTorch, CuPy and NumPy all speak, and
// the only one that carries bfloat16) and, failing that, __cuda_array_interface__ (CuPy, Numba).
#pragma once

#include <pybind11/pybind11.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kbench::python {

enum class ElementType { f16, bf16, f32, f64 };

std::string element_type_name(ElementType t);  // "float16", ...

// One tensor-like's elements: `data` is the address of element 0 (on the device when on_device),
// `strides` in elements. Holds the object (and the DLPack capsule) so that the memory stays put.
struct ArrayView {
  pybind11::object owner;
  pybind11::object capsule;  // the DLPack capsule, whose deleter releases the view
  void* data = nullptr;
  bool on_device = false;
  ElementType type = ElementType::f32;
  std::vector<std::int64_t> shape, strides;
  std::int64_t elements() const;
  std::size_t element_bytes() const;
  // The bytes from the lowest to the highest element address, and the lowest element's offset
  // from element 0 (negative strides reach below it).
  std::size_t span_bytes() const;
  std::int64_t lowest_offset() const;
};

// `what` names the object in errors ("output 0 of variant 'torch'"). Throws UsageError (one line)
// when the object speaks neither protocol or holds an element type the check cannot compare.
// Call with the GIL held.
ArrayView view_array(const pybind11::handle& object, const std::string& what);

// The outputs a callable returned: one tensor-like, or a tuple or list of them.
std::vector<ArrayView> view_arrays(const pybind11::handle& object, const std::string& what);

// The elements in row-major order of the shape, as doubles; copied from the device on `stream`
// after it drains. Call without the GIL or with it; no Python API is used.
std::vector<double> read_values(const ArrayView& a, cudaStream_t stream);

// The raw bytes of the span (for the check that two launches wrote the same bits).
std::vector<std::byte> read_span(const ArrayView& a, cudaStream_t stream);

// Fills the span with 0xFF bytes on `stream`: NaN in every floating type kbench checks, so that
// an element the launch does not write fails the check (the poisoned-output rule).
void poison(const ArrayView& a, cudaStream_t stream);

}  // namespace kbench::python
