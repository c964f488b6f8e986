// The kernel ABI, declared once: the entry point a kernel exports on every target (its LLVM
// parameters, and the host's type for it), and the parameters of the function that runs one
// packet (one lane on a GPU) and of a split kernel's pieces.
#pragma once

#include "backend/backend.h"

#include <cstdint>

namespace kiln::detail::lowering {

/// `kernel(start, end, buffers, sizes, params, check, stream)`: lanes [start, end) of a
/// launch; buffers and sizes per slot (inputs, then outputs); the literal parameter block;
/// checked-mode state (and the Ctrl-C flag); nonzero `stream` asks the CPU for streaming
/// stores (LaunchArgs).
constexpr const char* kKernelParameters =
    "i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, "
    "ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag";
using KernelEntry = void (*)(uint64_t start, uint64_t end, void* const* buffers, const uint64_t* sizes,
                             const uint64_t* params, CheckState* check, uint64_t stream);

/// The packet at %i: the GPU's one-lane function and (with the frame) a piece.
#define KILN_PACKET_PARAMETERS                                                                         \
  "i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, " \
  "ptr noalias nocapture readonly %params, ptr %check"
#define KILN_PACKET_ARGUMENTS "i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check"
constexpr const char* kPacketParameters = KILN_PACKET_PARAMETERS;
constexpr const char* kPacketArguments = KILN_PACKET_ARGUMENTS;
/// A piece also takes the frame of values crossing pieces.
constexpr const char* kPieceParameters = KILN_PACKET_PARAMETERS ", ptr noalias nocapture %frame";
constexpr const char* kPieceArguments = KILN_PACKET_ARGUMENTS ", ptr %frame";
#undef KILN_PACKET_PARAMETERS
#undef KILN_PACKET_ARGUMENTS

}  // namespace kiln::detail::lowering
