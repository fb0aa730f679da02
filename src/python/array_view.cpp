#include "python/array_view.hpp"

#include <algorithm>
#include <cstring>

#include "core/dtype.hpp"
#include "core/errors.hpp"

namespace py = pybind11;

namespace kbench::python {

namespace {

// DLPack's ABI (dmlc/dlpack, dlpack.h, versions before 1.0: the "dltensor" capsule that
// __dlpack__ returns when no max_version is asked), declared here rather than required as a header.
struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // nullptr: compact row-major
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
constexpr std::int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;
constexpr std::uint8_t kDLFloat = 2, kDLBfloat = 4;

std::size_t type_bytes(ElementType t) {
  switch (t) {
    case ElementType::f16:
    case ElementType::bf16: return 2;
    case ElementType::f32: return 4;
    case ElementType::f64: return 8;
  }
  return 0;
}

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

ArrayView from_dlpack(const py::handle& object, const std::string& what) {
  ArrayView a;
  a.owner = py::reinterpret_borrow<py::object>(object);
  a.capsule = object.attr("__dlpack__")();
  const char* name = PyCapsule_GetName(a.capsule.ptr());
  if (name == nullptr || std::strcmp(name, "dltensor") != 0)
    throw UsageError(what + ": __dlpack__ did not return a DLPack tensor capsule");
  const auto* managed = static_cast<const DLManagedTensor*>(PyCapsule_GetPointer(a.capsule.ptr(), "dltensor"));
  if (managed == nullptr) throw UsageError(what + ": its DLPack capsule holds no tensor");
  const DLTensor& t = managed->dl_tensor;
  const std::int32_t dev = t.device.device_type;
  if (dev != kDLCPU && dev != kDLCUDA && dev != kDLCUDAHost && dev != kDLCUDAManaged)
    throw UsageError(what + ": its memory is neither the host's nor a CUDA device's (DLPack device type " +
                     std::to_string(dev) + ")");
  a.on_device = dev == kDLCUDA || dev == kDLCUDAManaged;
  if (t.dtype.lanes != 1) throw UsageError(what + ": vector element types are not compared");
  if (t.dtype.code == kDLFloat && t.dtype.bits == 16) a.type = ElementType::f16;
  else if (t.dtype.code == kDLFloat && t.dtype.bits == 32) a.type = ElementType::f32;
  else if (t.dtype.code == kDLFloat && t.dtype.bits == 64) a.type = ElementType::f64;
  else if (t.dtype.code == kDLBfloat && t.dtype.bits == 16) a.type = ElementType::bf16;
  else
    throw UsageError(what + ": element type (DLPack code " + std::to_string(t.dtype.code) + ", " +
                     std::to_string(t.dtype.bits) + " bits) is not one the check compares (float16, bfloat16, "
                     "float32, float64)");
  a.shape.assign(t.shape, t.shape + t.ndim);
  a.strides = t.strides ? std::vector<std::int64_t>(t.strides, t.strides + t.ndim) : row_major_strides(a.shape);
  a.data = static_cast<char*>(t.data) + t.byte_offset;
  return a;
}

ArrayView from_cuda_array_interface(const py::handle& object, const std::string& what) {
  ArrayView a;
  a.owner = py::reinterpret_borrow<py::object>(object);
  a.on_device = true;
  const py::dict cai = object.attr("__cuda_array_interface__");
  const std::string typestr = py::str(cai["typestr"]);
  if (typestr == "<f2") a.type = ElementType::f16;
  else if (typestr == "<f4") a.type = ElementType::f32;
  else if (typestr == "<f8") a.type = ElementType::f64;
  else
    throw UsageError(what + ": element type '" + typestr +
                     "' is not one the check compares (float16, float32, float64; bfloat16 through DLPack)");
  for (const auto& d : py::tuple(cai["shape"])) a.shape.push_back(d.cast<std::int64_t>());
  const std::size_t bytes = type_bytes(a.type);
  if (cai.contains("strides") && !cai["strides"].is_none())
    for (const auto& s : py::tuple(cai["strides"])) {
      const auto byte_stride = s.cast<std::int64_t>();
      if (byte_stride % static_cast<std::int64_t>(bytes) != 0)
        throw UsageError(what + ": a stride of " + std::to_string(byte_stride) + " bytes is not a whole number of elements");
      a.strides.push_back(byte_stride / static_cast<std::int64_t>(bytes));
    }
  else
    a.strides = row_major_strides(a.shape);
  a.data = reinterpret_cast<void*>(py::tuple(cai["data"])[0].cast<std::uintptr_t>());
  return a;
}

// Copies the span to the host: its bytes, starting at the lowest element.
std::vector<std::byte> host_span(const ArrayView& a, cudaStream_t stream) {
  std::vector<std::byte> bytes(a.span_bytes());
  if (bytes.empty()) return bytes;
  const char* low = static_cast<const char*>(a.data) + a.lowest_offset() * static_cast<std::int64_t>(a.element_bytes());
  if (a.on_device) {
    KB_CUDA(cudaStreamSynchronize(stream));
    KB_CUDA(cudaMemcpyAsync(bytes.data(), low, bytes.size(), cudaMemcpyDefault, stream));
    KB_CUDA(cudaStreamSynchronize(stream));
  } else {
    std::memcpy(bytes.data(), low, bytes.size());
  }
  return bytes;
}

double decode_element(ElementType t, const std::byte* p) {
  switch (t) {
    case ElementType::f16: return decode_one(DType::f16, p, 0);
    case ElementType::bf16: return decode_one(DType::bf16, p, 0);
    case ElementType::f32: return decode_one(DType::f32, p, 0);
    case ElementType::f64: {
      double v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
  }
  return 0;
}

}  // namespace

std::string element_type_name(ElementType t) {
  switch (t) {
    case ElementType::f16: return "float16";
    case ElementType::bf16: return "bfloat16";
    case ElementType::f32: return "float32";
    case ElementType::f64: return "float64";
  }
  return "?";
}

std::int64_t ArrayView::elements() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

std::size_t ArrayView::element_bytes() const { return type_bytes(type); }

std::int64_t ArrayView::lowest_offset() const {
  if (elements() == 0) return 0;
  std::int64_t low = 0;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (strides[i] < 0) low += strides[i] * (shape[i] - 1);
  return low;
}

std::size_t ArrayView::span_bytes() const {
  if (elements() == 0) return 0;
  std::int64_t high = 0;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (strides[i] > 0) high += strides[i] * (shape[i] - 1);
  return static_cast<std::size_t>(high - lowest_offset() + 1) * element_bytes();
}

ArrayView view_array(const py::handle& object, const std::string& what) {
  // PyTorch refuses to export a tensor that requires grad (a reference computed with autograd on):
  // its values, detached, are what is compared.
  if (py::hasattr(object, "__dlpack__") && py::hasattr(object, "requires_grad") && py::hasattr(object, "detach") &&
      py::bool_(object.attr("requires_grad")))
    return from_dlpack(object.attr("detach")(), what);
  if (py::hasattr(object, "__dlpack__")) return from_dlpack(object, what);
  if (py::hasattr(object, "__cuda_array_interface__")) return from_cuda_array_interface(object, what);
  throw UsageError(what + " is not a tensor-like object: it has neither __dlpack__ nor __cuda_array_interface__ "
                   "(got " + std::string(py::str(py::type::handle_of(object).attr("__name__"))) + ")");
}

std::vector<ArrayView> view_arrays(const py::handle& object, const std::string& what) {
  std::vector<ArrayView> views;
  if (py::isinstance<py::tuple>(object) || py::isinstance<py::list>(object)) {
    std::size_t i = 0;
    for (const auto& item : object) views.push_back(view_array(item, what + " [" + std::to_string(i++) + "]"));
  } else {
    views.push_back(view_array(object, what));
  }
  return views;
}

std::vector<double> read_values(const ArrayView& a, cudaStream_t stream) {
  const std::vector<std::byte> span = host_span(a, stream);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(a.elements()));
  if (a.elements() == 0) return values;
  // Walk the shape in row-major order, the offset following the strides.
  std::vector<std::int64_t> index(a.shape.size(), 0);
  const std::int64_t low = a.lowest_offset();
  std::int64_t offset = 0;
  for (std::int64_t n = 0; n < a.elements(); ++n) {
    values.push_back(decode_element(a.type, span.data() + (offset - low) * static_cast<std::int64_t>(a.element_bytes())));
    for (std::size_t d = a.shape.size(); d-- > 0;) {
      offset += a.strides[d];
      if (++index[d] < a.shape[d]) break;
      offset -= a.strides[d] * a.shape[d];
      index[d] = 0;
    }
  }
  return values;
}

std::vector<std::byte> read_span(const ArrayView& a, cudaStream_t stream) { return host_span(a, stream); }

void poison(const ArrayView& a, cudaStream_t stream) {
  const std::size_t bytes = a.span_bytes();
  if (bytes == 0) return;
  char* low = static_cast<char*>(a.data) + a.lowest_offset() * static_cast<std::int64_t>(a.element_bytes());
  if (a.on_device) {
    KB_CUDA(cudaMemsetAsync(low, 0xFF, bytes, stream));
    KB_CUDA(cudaStreamSynchronize(stream));
  } else {
    std::memset(low, 0xFF, bytes);
  }
}

}  // namespace kbench::python
