// One packet's frame, shared by every target: the entry block (buffer pointers, literals,
// parameters, broadcast inputs), the lane mask, the output stores (streaming where the
// target streams, else masked), the Ctrl-C poll of loop latches; and the module around the
// functions the target writes (declarations, metadata, attributes).
#include "backend/lowering/lowering.h"

#include "ir/op_info.h"

#include <algorithm>
#include <sstream>

namespace kiln::detail::lowering {

std::string Lowering::lower(const std::string& name) {
  value_used_ = values_read(form_);
  KernelSplit split = plan_kernel_split(form_, split_statements_, kMaxFrameBytes / (width_ * 8));
  for (uint32_t slot = 0; slot < form_.input_count + form_.output_count; ++slot) load_buffer(slot);
  splat(entry_, "end.v", "i64", "%end");
  block_ = "loop";
  body_ << "loop:\n";
  target_.begin_packet(body_);
  lane_mask();
  body_ << "  %i.next = add i64 %i, " << width_ << "\n";
  if (split.pieces() > 1)
    call_pieces(name, split);
  else
    for (uint32_t i = 0; i < form_.statements.size(); ++i) emit(i);
  store_outputs();

  std::ostringstream out;
  out << "; kiln kernel, " << target_.name() << ", " << width_ << " lanes\n";
  out << target_.functions(name, PacketCode{entry_.str(), body_.str(), polls_interrupt_, form_.output_count > 0});
  out << pieces_ << "\n";
  for (const std::string& d : declarations_) out << d << "\n";
  if (form_.output_count && target_.streams_outputs()) out << "\n!0 = !{i32 1}\n";
  if (form_.checks) out << "!1 = !{!\"branch_weights\", i32 1, i32 1048575}\n";  // reports are rare
  out << "\nattributes #0 = { nounwind " << target_.kernel_attributes() << " }\n";
  if (!pieces_.empty()) out << "attributes #1 = { noinline nounwind " << target_.piece_attributes() << " }\n";
  return out.str();
}

void Lowering::load_buffer(uint32_t slot) {
  entry_ << "  %buf.p" << slot << " = getelementptr inbounds ptr, ptr %buffers, i64 " << slot << "\n";
  entry_ << "  %buf" << slot << " = load ptr, ptr %buf.p" << slot << ", align 8\n";
}

void Lowering::lane_mask() {
  splat(body_, "i.v", "i64", "%i");
  body_ << "  %lane = add " << vec("i64") << " %i.v, " << lane_offsets() << "\n";
  body_ << "  %active = icmp ult " << vec("i64") << " %lane, %end.v\n";
}

void Lowering::end_function() {
  body_ << "  ret void\n";
  if (polls_interrupt_) body_ << "interrupted:\n  ret void\n";
  body_ << "}\n";
}

void Lowering::poll_interrupt(const std::string& loop_label) {
  // CheckState::interrupt: its address is loaded once per call, the flag once per iteration.
  if (!polls_interrupt_) {
    entry_ << "  %interrupt.p = getelementptr inbounds ptr, ptr %check, i64 1\n";
    entry_ << "  %interrupt = load ptr, ptr %interrupt.p, align 8\n";
    polls_interrupt_ = true;
  }
  body_ << "  " << loop_label << ".stop = load atomic i32, ptr %interrupt monotonic, align 4\n";
  body_ << "  " << loop_label << ".go = icmp eq i32 " << loop_label << ".stop, 0\n";
  body_ << "  br i1 " << loop_label << ".go, label " << loop_label << ".head, label %interrupted\n";
}

std::string Lowering::literal(uint32_t position, const KernelStatement& s) {
  std::string scalar = scalar_type(s.type);
  std::string tag = "lit" + std::to_string(position);
  std::string value;
  if (s.type == VarType::Bool) {
    value = s.literal ? "true" : "false";
  } else if (is_float(s.type)) {
    const char* int_type = s.type == VarType::Float32 ? "i32" : "i64";
    entry_ << "  %" << tag << ".bits = bitcast " << int_type << " "
           << int64_t(s.type == VarType::Float32 ? int64_t(int32_t(uint32_t(s.literal))) : int64_t(s.literal)) << " to "
           << scalar << "\n";
    value = "%" + tag + ".bits";
  } else {
    value = std::to_string(s.type == VarType::Int32 || s.type == VarType::UInt32 ? int64_t(int32_t(uint32_t(s.literal)))
                                                                                 : int64_t(s.literal));
  }
  splat(entry_, tag, scalar, value);
  return "%" + tag;
}

std::string Lowering::parameter(uint32_t position, const KernelStatement& s) {
  std::string scalar = scalar_type(s.type);
  std::string tag = "par" + std::to_string(position);
  entry_ << "  %" << tag << ".p = getelementptr inbounds i64, ptr %params, i64 " << s.literal << "\n";
  entry_ << "  %" << tag << ".bits = load i64, ptr %" << tag << ".p, align 8\n";
  std::string value = "%" + tag + ".bits";
  if (s.type == VarType::Float64) {
    entry_ << "  %" << tag << ".v = bitcast i64 " << value << " to double\n";
    value = "%" + tag + ".v";
  } else if (s.type != VarType::Int64 && s.type != VarType::UInt64) {
    const char* narrow = s.type == VarType::Bool ? "i1" : "i32";
    entry_ << "  %" << tag << ".n = trunc i64 " << value << " to " << narrow << "\n";
    value = "%" + tag + ".n";
    if (s.type == VarType::Float32) {
      entry_ << "  %" << tag << ".v = bitcast i32 " << value << " to float\n";
      value = "%" + tag + ".v";
    }
  }
  splat(entry_, tag, scalar, value);
  return "%" + tag;
}

std::string Lowering::load_input(uint32_t position, const KernelStatement& s) {
  std::string slot = std::to_string(s.input_slot);
  std::string tag = "in" + std::to_string(position);
  if (s.broadcast) {
    entry_ << "  %" << tag << ".s = load " << memory_type(s.type) << ", ptr %buf" << slot << ", align "
           << type_size(s.type) << "\n";
    std::string scalar = "%" + tag + ".s";
    if (s.type == VarType::Bool) {
      entry_ << "  %" << tag << ".sb = icmp ne i8 " << scalar << ", 0\n";
      scalar = "%" + tag + ".sb";
    }
    splat(entry_, tag, scalar_type(s.type), scalar);
    return "%" + tag;
  }
  std::string mt = memory_type(s.type);
  std::string ptr = instr("getelementptr inbounds " + mt + ", ptr %buf" + slot + ", i64 %i");
  std::string loaded =
      call(vec(mt), "llvm.masked.load." + vmangle(mt) + ".p0",
           {{"ptr", ptr}, {"i32", std::to_string(type_size(s.type))}, {vec("i1"), "%active"}, {vec(mt), "poison"}});
  return from_memory(s.type, loaded, body_, tag);
}

std::string Lowering::from_memory(VarType t, const std::string& v, std::ostringstream& out, const std::string& tag) {
  if (t != VarType::Bool) return v;
  out << "  %" << tag << ".b = icmp ne " << vec("i8") << " " << v << ", zeroinitializer\n";
  return "%" + tag + ".b";
}

std::string Lowering::to_memory(VarType t, const std::string& v) {
  if (t != VarType::Bool) return v;
  return instr("zext " + vec("i1") + " " + v + " to " + vec("i8"));
}

/// Full packets of a streaming launch (one whose output does not fit in the caches) use
/// non-temporal stores, which skip reading the target lines first; other packets use masked
/// stores. Blocks start at multiples of the packet width and output buffers are 64-byte
/// aligned, so a full packet is aligned too.
void Lowering::store_outputs() {
  std::vector<uint32_t> outputs;
  for (uint32_t i = 0; i < form_.statements.size(); ++i)
    if (form_.statements[i].output_slot != kNoSlot) outputs.push_back(i);
  if (outputs.empty()) {
    body_ << "  br label %latch\n";
    return;
  }
  std::vector<std::pair<std::string, std::string>> targets;  // (memory value, pointer)
  for (uint32_t position : outputs) {
    const KernelStatement& s = form_.statements[position];
    std::string ptr = instr("getelementptr inbounds " + std::string(memory_type(s.type)) + ", ptr %buf" +
                            std::to_string(s.output_slot) + ", i64 %i");
    targets.emplace_back(to_memory(s.type, names_[position]), ptr);
  }
  if (!target_.streams_outputs()) {
    store_masked(outputs, targets);
    return;
  }
  body_ << "  %full = icmp ule i64 %i.next, %end\n";
  body_ << "  %streaming = and i1 %full, %stream\n";
  body_ << "  br i1 %streaming, label %store.stream, label %store.masked\n";
  start_block("store.stream");
  for (size_t k = 0; k < outputs.size(); ++k) {
    VarType t = form_.statements[outputs[k]].type;
    size_t align = std::min<size_t>(64, type_size(t) * width_);
    body_ << "  store " << vec(memory_type(t)) << " " << targets[k].first << ", ptr " << targets[k].second << ", align "
          << align << ", !nontemporal !0\n";
  }
  body_ << "  br label %latch\n";
  start_block("store.masked");
  store_masked(outputs, targets);
}

void Lowering::store_masked(const std::vector<uint32_t>& outputs,
                            const std::vector<std::pair<std::string, std::string>>& targets) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    VarType t = form_.statements[outputs[k]].type;
    std::string mt = memory_type(t);
    call("void", "llvm.masked.store." + vmangle(mt) + ".p0",
         {{vec(mt), targets[k].first},
          {"ptr", targets[k].second},
          {"i32", std::to_string(type_size(t))},
          {vec("i1"), "%active"}});
  }
  body_ << "  br label %latch\n";
}

}  // namespace kiln::detail::lowering
