// Names of element types.
#include <kiln/types.h>

namespace kiln {

const char* type_name(VarType t) {
  static const char* names[] = {"bool", "i32", "u32", "i64", "u64", "f32", "f64"};
  return names[int(t)];
}

}  // namespace kiln
