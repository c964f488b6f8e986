// The backend factory, and the checked-mode report function shared with generated code.
#include "backend/backend.h"

#include "util/settings.h"

namespace kiln::detail {

void record_check_failure(CheckState* self, uint32_t statement, uint64_t index, uint64_t size, uint64_t lanes) {
  self->lanes += lanes;
  uint32_t expected = 0;
  if (self->failed.compare_exchange_strong(expected, 1)) {
    self->statement = statement;
    self->index = index;
    self->size = size;
  }
}

Backend& active_backend() { return flag(Flag::Interpreter) ? interpreter_backend() : device_backend(); }

Backend& device_backend() { return emulated_cuda() ? cuda_emulated_backend() : llvm_backend(); }

}  // namespace kiln::detail

namespace kiln {
int packet_width() { return int(detail::llvm_backend().packet_width()); }
}  // namespace kiln
