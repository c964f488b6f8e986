// The backend factory (by device and Flag::Interpreter), the packet width and the launch
// block size it constrains, and the checked-mode report function shared with generated code.
#include "backend/backend.h"

#include "memory/device_memory.h"
#include "util/settings.h"

#include <kiln/errors.h>

#include <string>

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

Backend& backend_for(Device device) {
  bool host_memory = device == Device::CPU || emulated_cuda();  // what the interpreter can read
  if (flag(Flag::Interpreter) && host_memory) return interpreter_backend();
  if (device == Device::CUDA) return emulated_cuda() ? cuda_emulated_backend() : cuda_backend();
  return llvm_backend();
}

DeviceGemm gemm_for(Device device) {
  if (device == Device::CUDA && !emulated_cuda()) return cuda_gemm();
  return nullptr;
}

}  // namespace kiln::detail

namespace kiln {
int packet_width() { return int(detail::llvm_backend().packet_width()); }

void set_block_size(size_t lanes) {
  size_t width = size_t(packet_width());
  if (lanes == 0 || lanes % width != 0)
    throw SizeError("kiln: set_block_size(): " + std::to_string(lanes) +
                    " lanes is not a positive multiple of the packet width " + std::to_string(width));
  detail::store_block_size(lanes);
}
}  // namespace kiln
