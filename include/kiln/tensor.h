// Tensor<T>: an n-dimensional, row-major shape over one flat Kiln array (TensorXf, TensorXd,
// TensorXu, TensorXi, TensorXb). Elementwise operations broadcast like NumPy and are traced
// and fused like any other array code; data movement (broadcasting, slicing, transposing,
// concatenation) is a gather whose index is traced too; reductions along an axis are block
// sums; matmul() is an OpenBLAS call and an evaluation boundary. Tensors take part in
// autodiff.h (enable_grad, grad, backward, CustomOp) through for_each_array().
#pragma once

#include <kiln/autodiff.h>
#include <kiln/detail/tensor_api.h>
#include <kiln/math.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// The extent of each axis, outermost first.
using Shape = std::vector<size_t>;

namespace detail {
// Shape arithmetic and traced index maps (src/tensor/tensor_index.cpp). `what` names the
// operation in error messages.
/// Number of elements; SizeError beyond 2^32 (tensor indices are 32-bit).
size_t element_count(const Shape& shape, const char* what);
/// "(2, 3)".
std::string shape_string(const Shape& shape);
/// NumPy broadcasting of two shapes; SizeError when an axis differs and neither is 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* what);
/// `axis` (negative counts from the end) as a position; IndexError when out of range.
size_t normalize_axis(int64_t axis, size_t ndim, const char* what);
/// `to` with one -1 inferred from `from`'s element count; SizeError when it cannot match.
Shape reshaped(const Shape& from, const std::vector<int64_t>& to);
/// For each element of shape `to`, the element of `from` (broadcast to `to`) it reads.
UInt32 broadcast_index(const Shape& from, const Shape& to);
/// For each element of the tensor permuted by `axes` (new axis i is old axis axes[i]),
/// the element of `shape` it reads; std::invalid_argument-free: IndexError on bad axes.
UInt32 permute_index(const Shape& shape, const std::vector<size_t>& axes);
/// For each element of `shape` sliced along `axis` to `count` entries from `start` by
/// `step`, the element it reads.
UInt32 slice_index(const Shape& shape, size_t axis, int64_t start, int64_t step, size_t count);
/// For each element of the concatenation of `parts` along `axis`, the part it reads
/// from: index within that part, and a mask per part.
struct ConcatIndex {
  std::vector<UInt32> index;
  std::vector<Bool> active;
  Shape shape;
};
ConcatIndex concat_index(const std::vector<Shape>& parts, size_t axis);
}  // namespace detail

template <ArrayScalar T> class Tensor;
template <typename X> struct is_tensor : std::false_type {};
template <typename T> struct is_tensor<Tensor<T>> : std::true_type {};
template <typename X> inline constexpr bool is_tensor_v = is_tensor<std::decay_t<X>>::value;

template <ArrayScalar T> Tensor<T> sum(const Tensor<T>& t, int64_t axis);

/// An n-dimensional view of a flat array: element (i0, ..., ik) is lane
/// ((i0 * d1 + i1) * d2 + ...) of array().
template <ArrayScalar T> class Tensor {
 public:
  using Value = T;
  using ArrayType = Array<T>;

  /// An empty tensor (no array, shape ()).
  Tensor() = default;
  /// `array` with `shape`; a one-lane array is repeated to fill it.
  Tensor(Array<T> array, Shape shape) : array_(std::move(array)), shape_(std::move(shape)) {
    size_t count = detail::element_count(shape_, "Tensor");
    if (array_.size() == 1 && count != 1) {
      if constexpr (std::is_same_v<T, bool>)
        array_ = array_ & kiln::full<Array<T>>(true, count);
      else
        array_ = array_ + kiln::zeros<Array<T>>(count);
    }
    if (array_.size() != count)
      throw SizeError("kiln: Tensor(): an array of " + std::to_string(array_.size()) + " elements cannot have shape " +
                      detail::shape_string(shape_) + " (" + std::to_string(count) +
                      " elements); reshape it or pass the matching shape");
  }
  /// A 1-D tensor over `array`.
  explicit Tensor(Array<T> array) : shape_{array.size()} { array_ = std::move(array); }

  static Tensor full(T value, Shape shape) {
    return Tensor(kiln::full<Array<T>>(value, detail::element_count(shape, "Tensor::full")), shape);
  }
  static Tensor zeros(Shape shape) { return full(T(0), std::move(shape)); }
  /// A copy of `element_count(shape)` values from host memory.
  static Tensor from(const T* data, Shape shape) {
    return Tensor(Array<T>::from(data, detail::element_count(shape, "Tensor::from")), shape);
  }

  const Shape& shape() const { return shape_; }
  /// Extent of one axis (negative counts from the end).
  size_t shape(int64_t axis) const { return shape_[detail::normalize_axis(axis, ndim(), "Tensor::shape")]; }
  size_t ndim() const { return shape_.size(); }
  /// Number of elements.
  size_t size() const { return array_.size(); }
  const Array<T>& array() const { return array_; }
  Array<T>& array() { return array_; }

  /// The same elements with another shape (one entry may be -1: inferred).
  Tensor reshape(const std::vector<int64_t>& shape) const { return Tensor(array_, detail::reshaped(shape_, shape)); }
  /// Entries start, start+step, ... before stop along `axis` (Python slice semantics:
  /// negative positions count from the end, out-of-range bounds are clamped).
  Tensor slice(int64_t axis, int64_t start, int64_t stop, int64_t step = 1) const {
    size_t a = detail::normalize_axis(axis, ndim(), "Tensor::slice");
    if (step == 0) throw ValueError("kiln: Tensor::slice(): step must not be 0");
    int64_t n = int64_t(shape_[a]);
    auto clamp = [&](int64_t v, int64_t low, int64_t high) {
      if (v < 0) v += n;
      return v < low ? low : (v > high ? high : v);
    };
    int64_t first = step > 0 ? clamp(start, 0, n) : clamp(start, -1, n - 1);
    int64_t last = step > 0 ? clamp(stop, 0, n) : clamp(stop, -1, n - 1);
    int64_t count = step > 0 ? (last - first + step - 1) / step : (first - last - step - 1) / -step;
    Shape shape = shape_;
    shape[a] = size_t(count < 0 ? 0 : count);
    if (shape == shape_ && (step == 1 || shape_[a] <= 1)) return *this;  // a reversal keeps the shape
    return moved(detail::slice_index(shape_, a, first, step, shape[a]), shape);
  }
  /// Entry `i` of the leading axis (negative counts from the end), without that axis.
  Tensor operator[](int64_t i) const {
    if (ndim() == 0) throw IndexError("kiln: Tensor[]: a 0-d tensor has no axis to index");
    int64_t n = int64_t(shape_[0]);
    if (i < -n || i >= n)
      throw IndexError("kiln: Tensor[]: index " + std::to_string(i) + " is out of range for an axis of " +
                       std::to_string(n));
    int64_t first = i < 0 ? i + n : i;
    Tensor row = slice(0, first, first + 1);
    return Tensor(row.array_, Shape(shape_.begin() + 1, shape_.end()));
  }
  /// The tensor repeated along axes of extent 1 (and new leading axes) to `shape`.
  /// Gradients flow back as sums over the repeated axes.
  Tensor broadcast_to(const Shape& shape) const;
  /// Axes permuted: axis i of the result is axis axes[i] of this tensor.
  Tensor transpose(const std::vector<size_t>& axes) const {
    return moved(detail::permute_index(shape_, axes), permuted(axes));
  }
  /// Axes reversed (the matrix transpose for 2-D tensors).
  Tensor transpose() const {
    std::vector<size_t> axes(ndim());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = axes.size() - 1 - i;
    return transpose(axes);
  }
  /// Evaluates and copies the elements to the host (row-major).
  std::vector<T> to_vector() const
    requires(!std::is_same_v<T, bool>)
  {
    return array_.to_vector();
  }

 private:
  /// The elements gathered by `index` (a permutation or selection), with `shape`.
  Tensor moved(const UInt32& index, Shape shape) const { return Tensor(gather(array_, index), std::move(shape)); }
  Shape permuted(const std::vector<size_t>& axes) const {
    if (axes.size() != ndim())
      throw IndexError("kiln: Tensor::transpose(): " + std::to_string(axes.size()) + " axes given for a tensor of " +
                       std::to_string(ndim()));
    Shape out;
    for (size_t a : axes) out.push_back(shape_.at(detail::normalize_axis(int64_t(a), ndim(), "Tensor::transpose")));
    return out;
  }

  Array<T> array_;
  Shape shape_;
};

using TensorXf = Tensor<float>;
using TensorXd = Tensor<double>;
using TensorXu = Tensor<uint32_t>;
using TensorXi = Tensor<int32_t>;
using TensorXb = Tensor<bool>;

/// Lets autodiff.h (enable_grad, grad, detach, CustomOp, ...) and eval() take tensors:
/// a tensor is made of one array.
template <typename X, typename F>
  requires is_tensor_v<X>
void for_each_array(X&& value, F&& f) {
  f(value.array());
}

namespace detail {
/// broadcast_to with derivatives: forward repeats the tangent, reverse sums the adjoint
/// over the repeated axes.
template <typename T> class BroadcastOp : public CustomOp<std::tuple<Tensor<T>>, std::tuple<Tensor<T>>> {
 public:
  explicit BroadcastOp(Shape to) : to_(std::move(to)) {}
  std::tuple<Tensor<T>> eval(const std::tuple<Tensor<T>>& in) override {
    from_ = std::get<0>(in).shape();
    return {repeat(std::get<0>(in))};
  }
  std::tuple<Tensor<T>> forward(const std::tuple<Tensor<T>>& grad) override { return {repeat(std::get<0>(grad))}; }
  std::tuple<Tensor<T>> backward(const std::tuple<Tensor<T>>& grad) override {
    Tensor<T> g = std::get<0>(grad);
    size_t lead = to_.size() - from_.size();
    if (lead > 0) {  // the new leading axes, as one, summed in one pass
      std::vector<int64_t> collapsed{-1};
      for (size_t a = lead; a < to_.size(); ++a) collapsed.push_back(int64_t(to_[a]));
      g = sum(g.reshape(collapsed), 0);
    }
    for (size_t a = 0; a < from_.size(); ++a)
      if (from_[a] == 1 && to_[lead + a] != 1) {
        Shape kept = g.shape();
        g = sum(g, int64_t(a));
        kept[a] = 1;
        g = g.reshape(std::vector<int64_t>(kept.begin(), kept.end()));
      }
    return {g};
  }

 private:
  Tensor<T> repeat(const Tensor<T>& t) const {
    return Tensor<T>(gather(t.array(), broadcast_index(t.shape(), to_)), to_);
  }
  Shape to_, from_;
};
}  // namespace detail

template <ArrayScalar T> Tensor<T> Tensor<T>::broadcast_to(const Shape& shape) const {
  Shape checked = detail::broadcast_shapes(shape_, shape, "Tensor::broadcast_to");
  if (checked != shape)
    throw SizeError("kiln: Tensor::broadcast_to(): shape " + detail::shape_string(shape_) + " cannot be broadcast to " +
                    detail::shape_string(shape));
  if (shape == shape_) return *this;
  if (size() == 1) return Tensor(array_, shape);
  if constexpr (std::is_floating_point_v<T>) {
    if (array_.ad_index() && detail::ad_recording())
      return std::get<0>(custom(std::make_shared<detail::BroadcastOp<T>>(shape), *this));
  }
  return Tensor(gather(array_, detail::broadcast_index(shape_, shape)), shape);
}

namespace detail {
/// The array of `t` broadcast to `shape` (one-lane arrays stay one lane: the IR
/// broadcasts those itself).
template <typename T> Array<T> expanded(const Tensor<T>& t, const Shape& shape) {
  if (t.shape() == shape || t.size() == 1) return t.array();
  return t.broadcast_to(shape).array();
}
/// Applies `f` to the arrays of `a` and `b` broadcast against each other.
template <typename T, typename F> auto broadcasting(const Tensor<T>& a, const Tensor<T>& b, const char* what, F&& f) {
  Shape shape = broadcast_shapes(a.shape(), b.shape(), what);
  auto result = f(expanded(a, shape), expanded(b, shape));
  return Tensor<typename decltype(result)::Value>(std::move(result), shape);
}
}  // namespace detail

// ---- elementwise ------------------------------------------------------------------------------

#define KILN_TENSOR_BINARY(symbol, name)                                                                      \
  template <typename T> auto operator symbol(const Tensor<T>& a, const Tensor<T>& b) {                        \
    return detail::broadcasting(a, b, name, [](const Array<T>& x, const Array<T>& y) { return x symbol y; }); \
  }                                                                                                           \
  template <typename T> auto operator symbol(const Tensor<T>& a, std::type_identity_t<T> b) {                 \
    return a symbol Tensor<T>(Array<T>(b), Shape{});                                                          \
  }                                                                                                           \
  template <typename T> auto operator symbol(std::type_identity_t<T> a, const Tensor<T>& b) {                 \
    return Tensor<T>(Array<T>(a), Shape{}) symbol b;                                                          \
  }
KILN_TENSOR_BINARY(+, "Tensor +")
KILN_TENSOR_BINARY(-, "Tensor -")
KILN_TENSOR_BINARY(*, "Tensor *")
KILN_TENSOR_BINARY(/, "Tensor /")
KILN_TENSOR_BINARY(%, "Tensor %")
KILN_TENSOR_BINARY(==, "Tensor ==")
KILN_TENSOR_BINARY(!=, "Tensor !=")
KILN_TENSOR_BINARY(<, "Tensor <")
KILN_TENSOR_BINARY(<=, "Tensor <=")
KILN_TENSOR_BINARY(>, "Tensor >")
KILN_TENSOR_BINARY(>=, "Tensor >=")
KILN_TENSOR_BINARY(&, "Tensor &")
KILN_TENSOR_BINARY(|, "Tensor |")
#undef KILN_TENSOR_BINARY

template <typename T> Tensor<T> operator-(const Tensor<T>& a) { return Tensor<T>(-a.array(), a.shape()); }
inline TensorXb operator!(const TensorXb& a) { return TensorXb(!a.array(), a.shape()); }

#define KILN_TENSOR_BINARY_FUNCTION(name)                                                                      \
  template <typename T> Tensor<T> name(const Tensor<T>& a, const Tensor<T>& b) {                               \
    return detail::broadcasting(a, b, #name, [](const Array<T>& x, const Array<T>& y) { return name(x, y); }); \
  }                                                                                                            \
  template <typename T> Tensor<T> name(const Tensor<T>& a, std::type_identity_t<T> b) {                        \
    return name(a, Tensor<T>(Array<T>(b), Shape{}));                                                           \
  }
KILN_TENSOR_BINARY_FUNCTION(min)
KILN_TENSOR_BINARY_FUNCTION(max)
KILN_TENSOR_BINARY_FUNCTION(pow)
KILN_TENSOR_BINARY_FUNCTION(atan2)
#undef KILN_TENSOR_BINARY_FUNCTION

#define KILN_TENSOR_UNARY_FUNCTION(name) \
  template <typename T> Tensor<T> name(const Tensor<T>& a) { return Tensor<T>(name(a.array()), a.shape()); }
KILN_TENSOR_UNARY_FUNCTION(abs)
KILN_TENSOR_UNARY_FUNCTION(sqrt)
KILN_TENSOR_UNARY_FUNCTION(rcp)
KILN_TENSOR_UNARY_FUNCTION(rsqrt)
KILN_TENSOR_UNARY_FUNCTION(floor)
KILN_TENSOR_UNARY_FUNCTION(ceil)
KILN_TENSOR_UNARY_FUNCTION(round)
KILN_TENSOR_UNARY_FUNCTION(trunc)
KILN_TENSOR_UNARY_FUNCTION(exp)
KILN_TENSOR_UNARY_FUNCTION(exp2)
KILN_TENSOR_UNARY_FUNCTION(log)
KILN_TENSOR_UNARY_FUNCTION(log2)
KILN_TENSOR_UNARY_FUNCTION(sin)
KILN_TENSOR_UNARY_FUNCTION(cos)
KILN_TENSOR_UNARY_FUNCTION(tan)
KILN_TENSOR_UNARY_FUNCTION(asin)
KILN_TENSOR_UNARY_FUNCTION(acos)
KILN_TENSOR_UNARY_FUNCTION(atan)
KILN_TENSOR_UNARY_FUNCTION(sinh)
KILN_TENSOR_UNARY_FUNCTION(cosh)
KILN_TENSOR_UNARY_FUNCTION(tanh)
KILN_TENSOR_UNARY_FUNCTION(erf)
KILN_TENSOR_UNARY_FUNCTION(cbrt)
#undef KILN_TENSOR_UNARY_FUNCTION

/// Lane-wise `mask ? t : f`, all three broadcast against each other.
template <typename T> Tensor<T> select(const TensorXb& mask, const Tensor<T>& t, const Tensor<T>& f) {
  Shape shape =
      detail::broadcast_shapes(mask.shape(), detail::broadcast_shapes(t.shape(), f.shape(), "select"), "select");
  return Tensor<T>(select(detail::expanded(mask, shape), detail::expanded(t, shape), detail::expanded(f, shape)),
                   shape);
}
/// Value conversion of every element (see cast() in array.h).
template <typename To, typename T> Tensor<To> cast(const Tensor<T>& a) {
  return Tensor<To>(cast<To>(a.array()), a.shape());
}

// ---- along an axis ----------------------------------------------------------------------------

/// Sums along `axis` (negative counts from the end), which disappears from the shape.
template <ArrayScalar T> Tensor<T> sum(const Tensor<T>& t, int64_t axis) {
  size_t a = detail::normalize_axis(axis, t.ndim(), "sum");
  Shape shape = t.shape();
  size_t length = shape[a], inner = 1;
  for (size_t k = a + 1; k < shape.size(); ++k) inner *= shape[k];
  shape.erase(shape.begin() + a);
  if (length == 1) return Tensor<T>(t.array(), shape);
  if (length == 0) return Tensor<T>::zeros(shape);
  if (inner == 1) return Tensor<T>(block_sum(t.array(), length), shape);
  size_t outer = t.size() / (length * inner);
  if constexpr (std::is_floating_point_v<T>) {
    if (outer == 1) {  // the (length × inner) matrix, transposed, times a column of ones: one GEMM
      Array<T> ones = full<Array<T>>(T(1), length);
      return Tensor<T>(
          Array<T>::steal(detail::matmul(t.array().operand(), ones.operand(), inner, length, 1, /*transpose_a=*/true)),
          shape);
    }
  }
  std::vector<size_t> axes;
  for (size_t k = 0; k < t.ndim(); ++k)
    if (k != a) axes.push_back(k);
  axes.push_back(a);
  return Tensor<T>(block_sum(t.transpose(axes).array(), length), shape);
}
/// The sum of every element, as a 0-d tensor.
template <ArrayScalar T> Tensor<T> sum(const Tensor<T>& t) { return Tensor<T>(sum(t.array()), Shape{}); }
/// Means along `axis` (which disappears), or of every element.
template <ArrayScalar T> Tensor<T> mean(const Tensor<T>& t, int64_t axis) { return sum(t, axis) / T(t.shape(axis)); }
template <ArrayScalar T> Tensor<T> mean(const Tensor<T>& t) { return sum(t) / T(t.size()); }

/// Running sums along the last axis (`exclusive`: each entry leaves out its own value).
/// Accumulated in double precision, so long axes lose no accuracy; differentiable.
template <typename T>
  requires std::is_floating_point_v<T>
Tensor<T> cumsum(const Tensor<T>& t, bool exclusive = false) {
  if (t.ndim() == 0) throw IndexError("kiln: cumsum(): a 0-d tensor has no axis to sum along");
  size_t length = t.shape(-1), rows = length ? t.size() / length : 0;
  if (t.size() == 0) return t;
  Float64 wide = cast<double>(t.array());
  // Running sums over the whole flat array, minus the total of the rows before each row.
  Float64 running = prefix_sum(wide, exclusive);
  Tensor<double> before(prefix_sum(block_sum(wide, length), /*exclusive=*/true), Shape{rows, 1});
  Float64 offset = before.broadcast_to(Shape{rows, length}).array();
  return Tensor<T>(cast<T>(running - offset), t.shape());
}

/// The tensors joined along `axis`; the other axes must agree.
template <typename T> Tensor<T> concatenate(const std::vector<Tensor<T>>& parts, int64_t axis = 0) {
  if (parts.empty()) throw ValueError("kiln: concatenate(): no tensors given");
  std::vector<Shape> shapes;
  for (const Tensor<T>& p : parts) shapes.push_back(p.shape());
  detail::ConcatIndex c = detail::concat_index(shapes, detail::normalize_axis(axis, parts[0].ndim(), "concatenate"));
  Array<T> result = gather(parts.back().array(), c.index.back(), c.active.back());
  for (size_t k = parts.size() - 1; k-- > 0;)
    result = select(c.active[k], gather(parts[k].array(), c.index[k], c.active[k]), result);
  return Tensor<T>(result, c.shape);
}

/// The matrix product a·b: a is (..., k) (leading axes are rows), b is (k, n); the result
/// is (..., n). OpenBLAS computes it: an evaluation boundary (see detail::matmul).
template <typename T>
  requires std::is_floating_point_v<T>
Tensor<T> matmul(const Tensor<T>& a, const Tensor<T>& b) {
  if (a.ndim() < 1 || b.ndim() != 2)
    throw SizeError("kiln: matmul(): shapes " + detail::shape_string(a.shape()) + " and " +
                    detail::shape_string(b.shape()) +
                    " given; the second operand must be a matrix (k, n) and the "
                    "first have at least one axis");
  size_t k = a.shape(-1), n = b.shape(1);
  if (b.shape(0) != k)
    throw SizeError("kiln: matmul(): shapes " + detail::shape_string(a.shape()) + " and " +
                    detail::shape_string(b.shape()) + " do not chain: the last axis of the first (" +
                    std::to_string(k) + ") must equal the first axis of the second (" + std::to_string(b.shape(0)) +
                    ")");
  size_t m = k ? a.size() / k : 0;
  Shape shape = a.shape();
  shape.back() = n;
  return Tensor<T>(Array<T>::steal(detail::matmul(a.array().operand(), b.array().operand(), m, k, n)), shape);
}

}  // namespace kiln
