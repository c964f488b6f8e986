// Shape arithmetic and the traced index maps behind tensor.h's data movement. An index map
// turns the lane number of the result into the lane of the source with integer divisions
// and remainders by the (literal) extents, so it fuses into the kernel that consumes it.
// The extent of the leading axis never enters a map: that is the axis chunked_map() slices,
// and a kernel must not depend on how many rows a chunk has.
#include <kiln/tensor.h>

namespace kiln::detail {
namespace {

constexpr size_t kMaxElements = size_t(1) << 32;

/// Row-major strides of `shape`.
std::vector<size_t> strides_of(const Shape& shape) {
  std::vector<size_t> strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

/// The coordinates of lane `lane` in `shape`, outermost first (the leading coordinate is
/// what remains after the inner axes are divided out).
std::vector<UInt32> coordinates(const UInt32& lane, const Shape& shape) {
  std::vector<UInt32> coords(shape.size());
  UInt32 rest = lane;
  for (size_t k = shape.size(); k-- > 1;) {
    coords[k] = rest % uint32_t(shape[k]);
    rest = rest / uint32_t(shape[k]);
  }
  if (!shape.empty()) coords[0] = rest;
  return coords;
}

/// Sum over axes of coords[k] * strides[k], skipping zero strides.
UInt32 linear(const std::vector<UInt32>& coords, const std::vector<size_t>& strides, size_t lanes) {
  UInt32 index = zeros<UInt32>(lanes);
  bool first = true;
  for (size_t k = 0; k < coords.size(); ++k) {
    if (strides[k] == 0) continue;
    UInt32 term = strides[k] == 1 ? coords[k] : coords[k] * uint32_t(strides[k]);
    index = first ? term : index + term;
    first = false;
  }
  return index;
}

}  // namespace

size_t element_count(const Shape& shape, const char* what) {
  size_t count = 1;
  for (size_t d : shape) {
    if (d != 0 && count > kMaxElements / d)
      throw SizeError(std::string("kiln: ") + what + "(): shape " + shape_string(shape) +
                      " has more than 2^32 elements; tensors are indexed with 32 bits, so split it");
    count *= d;
  }
  if (count > kMaxElements)
    throw SizeError(std::string("kiln: ") + what + "(): shape " + shape_string(shape) +
                    " has more than 2^32 elements; tensors are indexed with 32 bits, so split it");
  return count;
}

std::string shape_string(const Shape& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* what) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t k = 0; k < n; ++k) {
    size_t da = k + a.size() >= n ? a[k + a.size() - n] : 1;
    size_t db = k + b.size() >= n ? b[k + b.size() - n] : 1;
    if (da != db && da != 1 && db != 1)
      throw SizeError(std::string("kiln: ") + what + ": shapes " + shape_string(a) + " and " + shape_string(b) +
                      " do not broadcast (axis " + std::to_string(k) + ": " + std::to_string(da) + " vs " +
                      std::to_string(db) + "); reshape one of them so that each axis matches or is 1");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

size_t normalize_axis(int64_t axis, size_t ndim, const char* what) {
  int64_t n = int64_t(ndim);
  if (axis < -n || axis >= n)
    throw IndexError(std::string("kiln: ") + what + "(): axis " + std::to_string(axis) +
                     " is out of range for a tensor of " + std::to_string(ndim) + " axes");
  return size_t(axis < 0 ? axis + n : axis);
}

Shape reshaped(const Shape& from, const std::vector<int64_t>& to) {
  size_t count = element_count(from, "reshape"), known = 1;
  int inferred = -1;
  Shape out(to.size());
  for (size_t k = 0; k < to.size(); ++k) {
    if (to[k] == -1 && inferred < 0) {
      inferred = int(k);
      continue;
    }
    if (to[k] < 0)
      throw SizeError("kiln: reshape(): extent " + std::to_string(to[k]) +
                      " given; extents must be >= 0, with at "
                      "most one -1 to infer");
    out[k] = size_t(to[k]);
    known *= out[k];
  }
  if (inferred >= 0) out[size_t(inferred)] = known ? count / known : 0;
  if (element_count(out, "reshape") != count)
    throw SizeError("kiln: reshape(): a tensor of shape " + shape_string(from) + " (" + std::to_string(count) +
                    " elements) cannot become " + shape_string(out) + "; the element counts must agree");
  return out;
}

UInt32 broadcast_index(const Shape& from, const Shape& to) {
  size_t lanes = element_count(to, "broadcast_to"), lead = to.size() - from.size();
  std::vector<size_t> source = strides_of(from), strides(to.size(), 0);
  for (size_t k = 0; k < from.size(); ++k) strides[lead + k] = from[k] == 1 ? 0 : source[k];
  return linear(coordinates(arange<UInt32>(lanes), to), strides, lanes);
}

UInt32 permute_index(const Shape& shape, const std::vector<size_t>& axes) {
  std::vector<size_t> source = strides_of(shape), strides;
  Shape out;
  std::vector<bool> seen(shape.size(), false);
  for (size_t a : axes) {
    if (a >= shape.size() || seen[a])
      throw IndexError("kiln: Tensor::transpose(): the axes must be a permutation of 0.." +
                       std::to_string(shape.size() - 1));
    seen[a] = true;
    out.push_back(shape[a]);
    strides.push_back(source[a]);
  }
  size_t lanes = element_count(out, "transpose");
  return linear(coordinates(arange<UInt32>(lanes), out), strides, lanes);
}

UInt32 slice_index(const Shape& shape, size_t axis, int64_t start, int64_t step, size_t count) {
  Shape out = shape;
  out[axis] = count;
  size_t lanes = element_count(out, "slice");
  std::vector<size_t> strides = strides_of(shape);
  std::vector<UInt32> coords = coordinates(arange<UInt32>(lanes), out);
  // coordinate along `axis` = start + step * c (UInt32 arithmetic wraps for negative steps,
  // and the sum lands back in range).
  coords[axis] = coords[axis] * uint32_t(int32_t(step)) + uint32_t(start);
  return linear(coords, strides, lanes);
}

ConcatIndex concat_index(const std::vector<Shape>& parts, size_t axis) {
  ConcatIndex result;
  result.shape = parts[0];
  result.shape[axis] = 0;
  for (const Shape& p : parts) {
    bool agree = p.size() == parts[0].size();
    for (size_t k = 0; agree && k < p.size(); ++k) agree = k == axis || p[k] == parts[0][k];
    if (!agree)
      throw SizeError("kiln: concatenate(): shapes " + shape_string(parts[0]) + " and " + shape_string(p) +
                      " differ outside axis " + std::to_string(axis) + "; only the joined axis may differ");
    result.shape[axis] += p[axis];
  }
  size_t lanes = element_count(result.shape, "concatenate");
  std::vector<UInt32> coords = coordinates(arange<UInt32>(lanes), result.shape);
  uint32_t offset = 0;
  for (const Shape& p : parts) {
    std::vector<UInt32> local = coords;
    local[axis] = coords[axis] - offset;
    result.active.push_back(coords[axis] >= offset && coords[axis] < offset + uint32_t(p[axis]));
    result.index.push_back(linear(local, strides_of(p), lanes));
    offset += uint32_t(p[axis]);
  }
  return result;
}

}  // namespace kiln::detail
