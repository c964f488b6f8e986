// Array<T>: the user-facing lazy array. It holds one IR node index (and, when it carries
// derivatives, an AD node index); operations on arrays record new nodes (nothing is
// computed until eval() or a read), and reading evaluates.
#pragma once

#include <kiln/detail/ad_api.h>
#include <kiln/detail/trace_api.h>
#include <kiln/errors.h>
#include <kiln/runtime.h>
#include <kiln/types.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

namespace kiln {

template <ArrayScalar T> class Array;

namespace detail {
template <typename T> uint64_t to_bits(T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
}  // namespace detail

/// A 1-D lazily evaluated array of `T`. Size-1 arrays broadcast against any size.
template <ArrayScalar T> class Array {
 public:
  using Value = T;
  static constexpr VarType Type = var_type_v<T>;

  /// An empty array (no node).
  Array() = default;
  /// A size-1 literal; `where` (the caller) is shown when the literal's value changes
  /// the kernel that is compiled.
  Array(T value, std::source_location where = std::source_location::current())
      : index_(detail::make_literal(Type, detail::to_bits(value), 1, where)) {}
  /// An evaluated copy of `values`.
  Array(std::initializer_list<T> values) : Array(steal(detail::make_copy(Type, std::data(values), values.size()))) {}

  Array(const Array& other) : index_(other.index_), ad_(other.ad_) {
    detail::inc_ref(index_);
    if (ad_) detail::ad_inc_ref(ad_);
  }
  Array(Array&& other) noexcept : index_(other.index_), ad_(other.ad_) {
    other.index_ = 0;
    other.ad_ = 0;
  }
  Array& operator=(const Array& other) {
    Array copy(other);
    swap(copy);
    return *this;
  }
  Array& operator=(Array&& other) noexcept {
    swap(other);
    return *this;
  }
  ~Array() {
    detail::dec_ref(index_);
    if (ad_) detail::ad_dec_ref(ad_);
  }
  void swap(Array& other) noexcept {
    std::swap(index_, other.index_);
    std::swap(ad_, other.ad_);
  }

  /// Copies `count` elements from host memory onto `device`.
  static Array from(const T* data, size_t count, Device device = default_device()) {
    return steal(detail::make_copy(Type, data, count, device));
  }
  static Array from(const std::vector<T>& values)
    requires(!std::is_same_v<T, bool>)
  {
    return from(values.data(), values.size());
  }
  /// Uses caller memory on `device` (a GPU address for CUDA) without a copy; `owner`
  /// (if given) is kept alive while needed.
  static Array wrap(T* data, size_t count, std::shared_ptr<void> owner = nullptr, Device device = Device::CPU) {
    return steal(detail::make_wrapped(Type, data, count, std::move(owner), device));
  }
  /// Takes over a reference to an existing node.
  static Array steal(detail::Index index) {
    Array result;
    result.index_ = index;
    return result;
  }
  /// Takes over a reference to a node and one to its AD node (0: no derivatives).
  static Array steal(detail::AdValue value) {
    Array result = steal(value.value);
    result.ad_ = value.ad;
    return result;
  }
  /// Shares an existing node (adds a reference).
  static Array borrow(detail::Index index) {
    detail::inc_ref(index);
    return steal(index);
  }

  detail::Index index() const { return index_; }
  /// The AD node (0 when the array carries no derivatives; see autodiff.h).
  detail::AdIndex ad_index() const { return ad_; }
  detail::AdOperand operand() const { return {index_, ad_}; }
  /// Rebinds this array to another node, taking over the reference (the AD node stays:
  /// for replacements that hold the same values).
  void reset(detail::Index index) {
    detail::dec_ref(index_);
    index_ = index;
  }
  /// Replaces the AD node, taking over the reference (0 detaches the array).
  void reset_ad(detail::AdIndex ad) {
    if (ad_) detail::ad_dec_ref(ad_);
    ad_ = ad;
  }
  bool valid() const { return index_ != 0; }
  size_t size() const { return index_ ? detail::node_size(index_) : 0; }
  /// The device the array is on.
  Device device() const { return detail::node_device(index_); }
  /// The array on `device`: this one when it is there, else an evaluated copy. Derivatives
  /// cross with it: tangents are copied forward, adjoints back to this array's device.
  Array to(Device device) const { return steal(detail::ad_to_device(operand(), device)); }

  /// Reads element `i` (evaluates pending work); throws IndexError when out of range.
  T read(size_t i) const {
    T value;
    detail::read(index_, i, &value);
    return value;
  }
  /// The single value of a size-1 array.
  T item() const {
    if (size() != 1)
      throw SizeError("kiln: item(): the array has " + std::to_string(size()) +
                      " elements, expected 1; read one of them by its index");
    return read(0);
  }
  /// Evaluates and returns a pointer to the elements on the array's device (valid while
  /// the array lives; for CUDA a GPU address: read on the host with to_vector()).
  const T* data() const { return static_cast<const T*>(detail::data(index_)); }
  /// Evaluates and copies all elements to the host.
  std::vector<T> to_vector() const
    requires(!std::is_same_v<T, bool>)
  {
    std::vector<T> values(size());
    copy_to(values.data());
    return values;
  }
  /// Evaluates and copies all elements to host memory at `out`.
  void copy_to(T* out) const { detail::read_all(index_, out); }

 private:
  detail::Index index_ = 0;
  detail::AdIndex ad_ = 0;
};

using Bool = Array<bool>;
using Int32 = Array<int32_t>;
using UInt32 = Array<uint32_t>;
using Int64 = Array<int64_t>;
using UInt64 = Array<uint64_t>;
using Float = Array<float>;
using Float64 = Array<double>;

/// True for Array<T>.
template <typename A> struct is_array : std::false_type {};
template <typename T> struct is_array<Array<T>> : std::true_type {};
template <typename A> inline constexpr bool is_array_v = is_array<std::decay_t<A>>::value;

/// Mask, signed- and unsigned-integer arrays of the same width as `A`'s elements.
template <typename A> using mask_t = Array<bool>;
template <typename A> using int_array_t = Array<std::conditional_t<sizeof(typename A::Value) == 8, int64_t, int32_t>>;
template <typename A> using uint_array_t =
    Array<std::conditional_t<sizeof(typename A::Value) == 8, uint64_t, uint32_t>>;

namespace detail {
template <typename R, typename... Args> R traced(Op op, const Args&... args) {
  if ((args.ad_index() | ...) == 0) return R::steal(trace(op, args.index()...));
  AdOperand operands[] = {args.operand()...};
  return R::steal(ad_trace(op, operands, sizeof...(Args)));
}
/// A horizontal operation: with derivatives when the input carries them.
template <typename T> Array<T> horizontal(DiffOp op, Reduction kind, const Array<T>& a) {
  if (a.ad_index()) return Array<T>::steal(ad_horizontal(op, a.operand()));
  return Array<T>::steal(reduce(kind, a.index()));
}
template <typename T, typename S>
concept ScalarOperand = std::is_arithmetic_v<S> && !is_array_v<S>;
/// `value` as an Array<T>: arrays pass through, plain scalars become size-1 literals.
template <typename T, typename V> Array<T> lift(const V& value) {
  if constexpr (is_array_v<V>)
    return value;
  else
    return Array<T>(static_cast<T>(value), std::source_location());
}
/// A host scalar operand converted to T, with the user code it came from: operators take
/// it so that a literal's creation site is the expression that used it.
template <typename T> struct HostValue {
  template <typename S>
    requires ScalarOperand<T, S>
  HostValue(S value, std::source_location where = std::source_location::current())
      : value(static_cast<T>(value)), where(where) {}
  Array<T> array() const { return Array<T>(value, where); }
  T value;
  std::source_location where;
};
template <typename T> using host_value_t = std::type_identity_t<HostValue<T>>;
}  // namespace detail

// ---- elementwise arithmetic, bitwise and comparison operators -------------------------

#define KILN_BINARY_OPERATOR(symbol, op, Result)                                               \
  template <typename T> Result operator symbol(const Array<T>& a, const Array<T>& b) {         \
    return detail::traced<Result>(Op::op, a, b);                                               \
  }                                                                                            \
  template <typename T> Result operator symbol(const Array<T>& a, detail::host_value_t<T> b) { \
    return a symbol b.array();                                                                 \
  }                                                                                            \
  template <typename T> Result operator symbol(detail::host_value_t<T> a, const Array<T>& b) { \
    return a.array() symbol b;                                                                 \
  }

KILN_BINARY_OPERATOR(+, Add, Array<T>)
KILN_BINARY_OPERATOR(-, Sub, Array<T>)
KILN_BINARY_OPERATOR(*, Mul, Array<T>)
KILN_BINARY_OPERATOR(/, Div, Array<T>)
KILN_BINARY_OPERATOR(%, Mod, Array<T>)
KILN_BINARY_OPERATOR(&, And, Array<T>)
KILN_BINARY_OPERATOR(|, Or, Array<T>)
KILN_BINARY_OPERATOR(^, Xor, Array<T>)
KILN_BINARY_OPERATOR(<<, Shl, Array<T>)
KILN_BINARY_OPERATOR(>>, Shr, Array<T>)
KILN_BINARY_OPERATOR(==, Eq, Bool)
KILN_BINARY_OPERATOR(!=, Ne, Bool)
KILN_BINARY_OPERATOR(<, Lt, Bool)
KILN_BINARY_OPERATOR(<=, Le, Bool)
KILN_BINARY_OPERATOR(>, Gt, Bool)
KILN_BINARY_OPERATOR(>=, Ge, Bool)
#undef KILN_BINARY_OPERATOR

inline Bool operator&&(const Bool& a, const Bool& b) { return a & b; }
inline Bool operator||(const Bool& a, const Bool& b) { return a | b; }
inline Bool operator!(const Bool& a) { return detail::traced<Bool>(Op::Not, a); }
template <typename T> Array<T> operator-(const Array<T>& a) { return detail::traced<Array<T>>(Op::Neg, a); }
template <typename T> Array<T> operator~(const Array<T>& a) { return detail::traced<Array<T>>(Op::Not, a); }

#define KILN_COMPOUND_ASSIGNMENT(symbol)                                                     \
  template <typename T, typename B> Array<T>& operator symbol##=(Array<T>& a, const B & b) { \
    a = a symbol b;                                                                          \
    return a;                                                                                \
  }
KILN_COMPOUND_ASSIGNMENT(+)
KILN_COMPOUND_ASSIGNMENT(-)
KILN_COMPOUND_ASSIGNMENT(*)
KILN_COMPOUND_ASSIGNMENT(/)
KILN_COMPOUND_ASSIGNMENT(%)
KILN_COMPOUND_ASSIGNMENT(&)
KILN_COMPOUND_ASSIGNMENT(|)
KILN_COMPOUND_ASSIGNMENT(^)
KILN_COMPOUND_ASSIGNMENT(<<)
KILN_COMPOUND_ASSIGNMENT(>>)
#undef KILN_COMPOUND_ASSIGNMENT

// ---- elementwise functions --------------------------------------------------------------

#define KILN_UNARY_FUNCTION(name, op) \
  template <typename T> Array<T> name(const Array<T>& a) { return detail::traced<Array<T>>(Op::op, a); }
KILN_UNARY_FUNCTION(abs, Abs)
KILN_UNARY_FUNCTION(sqrt, Sqrt)
KILN_UNARY_FUNCTION(rcp, Rcp)
KILN_UNARY_FUNCTION(rsqrt, Rsqrt)
KILN_UNARY_FUNCTION(floor, Floor)
KILN_UNARY_FUNCTION(ceil, Ceil)
/// Rounds to the nearest integer, halfway cases to even (like std::nearbyint).
KILN_UNARY_FUNCTION(round, Round)
KILN_UNARY_FUNCTION(trunc, Trunc)
#undef KILN_UNARY_FUNCTION

template <typename T> Array<T> min(const Array<T>& a, const Array<T>& b) {
  return detail::traced<Array<T>>(Op::Min, a, b);
}
template <typename T> Array<T> max(const Array<T>& a, const Array<T>& b) {
  return detail::traced<Array<T>>(Op::Max, a, b);
}
template <typename T> Array<T> min(const Array<T>& a, detail::host_value_t<T> b) { return min(a, b.array()); }
template <typename T> Array<T> max(const Array<T>& a, detail::host_value_t<T> b) { return max(a, b.array()); }

/// a * b + c with a single rounding for floats.
template <typename T> Array<T> fma(const Array<T>& a, const Array<T>& b, const Array<T>& c) {
  return detail::traced<Array<T>>(Op::Fma, a, b, c);
}
template <typename T, typename B, typename C>
  requires(!(std::is_same_v<B, Array<T>> && std::is_same_v<C, Array<T>>))
Array<T> fma(const Array<T>& a, const B& b, const C& c) {
  return fma(a, detail::lift<T>(b), detail::lift<T>(c));
}
/// Lane-wise `mask ? t : f`.
template <typename T> Array<T> select(const Bool& mask, const Array<T>& t, const Array<T>& f) {
  return detail::traced<Array<T>>(Op::Select, mask, t, f);
}
template <typename T> Array<T> select(const Bool& mask, const Array<T>& t, detail::host_value_t<T> f) {
  return select(mask, t, f.array());
}
template <typename T> Array<T> select(const Bool& mask, detail::host_value_t<T> t, const Array<T>& f) {
  return select(mask, t.array(), f);
}

/// Value conversion. Float to integer saturates (NaN gives 0); to Bool means `!= 0`.
template <typename To, typename T> Array<To> cast(const Array<T>& a) {
  if constexpr (std::is_same_v<To, T>)
    return a;
  else if (a.ad_index()) {
    detail::AdOperand operand = a.operand();
    return Array<To>::steal(detail::ad_trace(Op::Cast, &operand, 1, var_type_v<To>));
  } else
    return Array<To>::steal(detail::trace(Op::Cast, a.index(), 0, 0, var_type_v<To>));
}
/// Reinterprets the bits as another type of the same width.
template <typename To, typename T> Array<To> reinterpret(const Array<T>& a) {
  static_assert(sizeof(To) == sizeof(T), "reinterpret<>() needs types of the same width");
  if constexpr (std::is_same_v<To, T>)
    return a;
  else
    return Array<To>::steal(detail::trace(Op::Bitcast, a.index(), 0, 0, var_type_v<To>));
}

template <typename T> Bool isnan(const Array<T>& a) { return a != a; }
template <typename T> Bool isinf(const Array<T>& a) { return abs(a) == Array<T>(std::numeric_limits<T>::infinity()); }
template <typename T> Bool isfinite(const Array<T>& a) { return abs(a) < Array<T>(std::numeric_limits<T>::infinity()); }

// ---- construction -----------------------------------------------------------------------

template <typename A>
  requires is_array_v<A>
A full(typename A::Value value, size_t size) {
  return A::steal(detail::make_literal(A::Type, detail::to_bits(value), size));
}
template <typename A>
  requires is_array_v<A>
A zeros(size_t size) {
  return full<A>(typename A::Value(0), size);
}
/// A value that kernels receive at launch instead of having it baked into their code:
/// changing it never compiles a new kernel (literals generalize this way automatically
/// once they change; opaque() does it from the start).
template <typename A>
A opaque(typename A::Value value, size_t size = 1, std::source_location where = std::source_location::current()) {
  return A::steal(detail::make_param(A::Type, detail::to_bits(value), size, where));
}
/// Makes each array opaque in place: literals become launch parameters, pending
/// computations are evaluated, evaluated arrays stay as they are.
template <typename... As> void make_opaque(As&... arrays) { (arrays.reset(detail::make_opaque(arrays.index())), ...); }
/// `size` uninitialized elements on `device` (memory is allocated now).
template <typename A>
  requires is_array_v<A>
A empty(size_t size, Device device = default_device()) {
  return A::steal(detail::make_empty(A::Type, size, device));
}
/// 0, 1, ..., size-1.
template <typename A> A arange(size_t size) {
  return cast<typename A::Value>(UInt32::steal(detail::make_counter(size)));
}
/// start, start+step, ... while below `stop` (for integers, as Python's range()).
template <typename A> A arange(typename A::Value start, typename A::Value stop, typename A::Value step = 1) {
  using T = typename A::Value;
  if (step == T(0)) throw ValueError("kiln: arange(): the step must not be zero");
  size_t n = 0;
  if constexpr (std::is_integral_v<T>) {  // exact for 64-bit values, as Python's range()
    __int128 span = __int128(stop) - __int128(start), by = __int128(step);
    bool forward = (span > 0) == (by > 0) && span != 0;
    __int128 count = forward ? (span + by + (by > 0 ? -1 : 1)) / by : 0;
    n = size_t(count);
  } else {
    double count = std::ceil((double(stop) - double(start)) / double(step));
    if (std::isnan(count) || std::isinf(count))
      throw ValueError("kiln: arange(): start, stop and step must be finite (got " + std::to_string(double(start)) +
                       ", " + std::to_string(double(stop)) + ", " + std::to_string(double(step)) + ")");
    n = count > 0 ? size_t(count) : 0;
  }
  return A(start) + arange<A>(n) * A(step);
}
/// `size` evenly spaced values from `min` to `max`: both included (the last one is `max`
/// exactly, as in NumPy), or `max` left out when not `endpoint` (steps of (max - min) / size).
template <typename A> A linspace(typename A::Value min, typename A::Value max, size_t size, bool endpoint = true) {
  using T = typename A::Value;
  static_assert(std::is_floating_point_v<T>, "linspace() needs a floating-point array");
  size_t intervals = endpoint ? size - 1 : size;
  T step = size > 1 || !endpoint ? (max - min) / T(intervals) : T(0);
  UInt32 lane = UInt32::steal(detail::make_counter(size));
  A values = fma(cast<T>(lane), A(step), A(min));
  return size > 1 && endpoint ? select(lane == uint32_t(size - 1), A(max), values) : values;
}

// ---- memory operations ------------------------------------------------------------------

/// source[index] on active lanes; inactive lanes give 0.
template <typename T> Array<T> gather(const Array<T>& source, const UInt32& index, const Bool& active = Bool(true)) {
  return detail::traced<Array<T>>(Op::Gather, source, index, active);
}
/// target[index] = value on active lanes (conflicting writes: one of them wins).
template <typename T>
void scatter(Array<T>& target, const Array<T>& value, const UInt32& index, const Bool& active = Bool(true)) {
  scatter_reduce(ReduceOp::None, target, value, index, active);
}
/// Atomically combines value into target[index] (Add, Min or Max), correct under conflicts.
/// Float additions into one element are summed in an unspecified order (lanes of a packet
/// first, then across threads), so their rounding may differ from one lane at a time.
template <typename T> void scatter_reduce(ReduceOp op, Array<T>& target, const Array<T>& value, const UInt32& index,
                                          const Bool& active = Bool(true)) {
  if (target.ad_index() | value.ad_index()) {
    detail::AdValue t{target.index(), target.ad_index()};
    detail::ad_scatter(op, t, value.operand(), index.index(), active.index());
    target = Array<T>::steal(t);
    return;
  }
  detail::Index t = target.index();
  detail::trace_scatter(op, t, value.index(), index.index(), active.index());
  if (t != target.index()) target.reset(t);
}
template <typename T>
void scatter_add(Array<T>& target, const Array<T>& value, const UInt32& index, const Bool& active = Bool(true)) {
  scatter_reduce(ReduceOp::Add, target, value, index, active);
}
/// Atomically increments target[index] per active lane and returns the old values: the
/// basis of append buffers (each lane gets a distinct slot).
inline UInt32 scatter_inc(UInt32& target, const UInt32& index, const Bool& active = Bool(true)) {
  detail::Index t = target.index();
  detail::Index result = detail::trace_scatter_inc(t, index.index(), active.index());
  if (t != target.index()) target.reset(t);
  return UInt32::steal(result);
}

// ---- horizontal operations (evaluate their input; results are size-1 arrays) -------------

template <typename T> Array<T> sum(const Array<T>& a) {
  return detail::horizontal(DiffOp::Sum, detail::Reduction::Sum, a);
}
template <typename T> Array<T> prod(const Array<T>& a) {
  return detail::horizontal(DiffOp::Prod, detail::Reduction::Prod, a);
}
template <typename T> Array<T> min(const Array<T>& a) {
  return detail::horizontal(DiffOp::ReduceMin, detail::Reduction::Min, a);
}
template <typename T> Array<T> max(const Array<T>& a) {
  return detail::horizontal(DiffOp::ReduceMax, detail::Reduction::Max, a);
}
inline Bool any(const Bool& a) { return Bool::steal(detail::reduce(detail::Reduction::Any, a.index())); }
inline Bool all(const Bool& a) { return Bool::steal(detail::reduce(detail::Reduction::All, a.index())); }
template <typename T> Array<T> dot(const Array<T>& a, const Array<T>& b) { return sum(a * b); }
/// Running sum; `exclusive` starts at 0 and leaves out the lane's own value.
template <typename T> Array<T> prefix_sum(const Array<T>& a, bool exclusive = false) {
  if (a.ad_index()) return Array<T>::steal(detail::ad_horizontal(DiffOp::PrefixSum, a.operand(), exclusive));
  return Array<T>::steal(detail::prefix_sum(a.index(), exclusive));
}
/// Indices of the true lanes, in increasing order.
inline UInt32 compress(const Bool& mask) { return UInt32::steal(detail::compress(mask.index())); }
/// Sums of consecutive groups of `block` elements (the last group may be short).
template <typename T> Array<T> block_sum(const Array<T>& a, size_t block) {
  if (a.ad_index()) return Array<T>::steal(detail::ad_horizontal(DiffOp::BlockSum, a.operand(), block));
  return Array<T>::steal(detail::block_sum(a.index(), block));
}

// ---- evaluation ---------------------------------------------------------------------------

/// Evaluates the arrays (one kernel per size) and every pending side effect.
template <typename... As> void eval(const As&... arrays) {
  detail::Index indices[] = {arrays.index()..., 0};
  detail::eval(indices, sizeof...(As));
}
/// Marks arrays for evaluation at the next eval().
template <typename... As> void schedule(const As&... arrays) { (detail::schedule(arrays.index()), ...); }
/// The pending computation behind the arrays as Graphviz DOT text (`dot -Tsvg`).
template <typename... As> std::string graphviz(const As&... arrays) {
  detail::Index indices[] = {arrays.index()..., 0};
  return detail::graphviz(indices, sizeof...(As));
}
/// The code of the kernels that would compute the arrays (and the pending side effects),
/// without compiling or launching them, on any machine: for `device` "cuda" their PTX
/// (sm_90, through LLVM's NVPTX target), for "cpu" their LLVM IR. Literals appear as a
/// first launch bakes them in.
template <typename... As> std::string kernel_source(const std::string& device, const As&... arrays) {
  detail::Index indices[] = {arrays.index()..., 0};
  return detail::kernel_source(indices, sizeof...(As), device, device == "cuda" ? "ptx" : "llvm");
}
/// Names an array in IR listings and kernel logs.
template <typename A>
void set_label(const A& array, const std::string& label, std::source_location where = std::source_location::current()) {
  detail::set_label(array.index(), label, where);
}

}  // namespace kiln
