// Bad input gets a specific, readable exception (never a crash): each case names the
// operation and the values involved.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "ir/verify.h"

#include <new>

using namespace kiln;
using kiln::detail::Index;

namespace {
/// Expects `fn` to throw E with every one of `fragments` in its message.
template <typename E, typename Fn> void expect_error(Fn&& fn, std::initializer_list<const char*> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no exception thrown";
  } catch (const E& e) {
    std::string message = e.what();
    for (const char* f : fragments)
      EXPECT_NE(message.find(f), std::string::npos) << "missing '" << f << "' in: " << message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}
}  // namespace

TEST(Errors, SizeMismatchNamesTheOpAndBothSizes) {
  Float a = arange<Float>(3), b = arange<Float>(5);
  expect_error<SizeError>([&] { Float c = a + b; }, {"Add", "3", "5", "size 1"});
  expect_error<SizeError>([&] { Float c = fma(a, a, b); }, {"Fma", "3 and 3 and 5"});
  Float target = zeros<Float>(10);
  expect_error<SizeError>([&] { scatter(target, a, UInt32{1, 2}); }, {"scatter", "3", "2"});
}

TEST(Errors, TypeMismatchInTheRuntimeTypedApi) {
  Float f = Float{1.f};
  Int32 i = Int32{1};
  expect_error<TypeError>([&] { detail::dec_ref(detail::trace(Op::Add, f.index(), i.index())); },
                          {"Add", "f32[1]", "i32[1]", "cast"});
  expect_error<TypeError>([&] { detail::dec_ref(detail::trace(Op::Sqrt, i.index())); }, {"Sqrt", "i32"});
  expect_error<TypeError>([&] { detail::dec_ref(detail::trace(Op::Shr, f.index(), f.index())); }, {"Shr", "f32"});
  expect_error<TypeError>([&] { detail::dec_ref(detail::trace(Op::Shl, f.index(), f.index())); }, {"Shl"});
  expect_error<TypeError>([&] { detail::dec_ref(detail::trace(Op::Select, f.index(), f.index(), f.index())); },
                          {"Select", "mask"});
  expect_error<TypeError>([&] { detail::dec_ref(detail::trace(Op::Bitcast, f.index(), 0, 0, VarType::Float64)); },
                          {"Bitcast", "widths"});
  Bool m = Bool{true};
  expect_error<TypeError>([&] { detail::dec_ref(detail::trace(Op::Lt, m.index(), m.index())); }, {"Lt", "Bool"});
}

TEST(Errors, MemoryOpsCheckTheirOperands) {
  Float source = Float{1.f, 2.f};
  Int32 signed_index = Int32{0};
  expect_error<TypeError>(
      [&] { detail::dec_ref(detail::trace(Op::Gather, source.index(), signed_index.index(), Bool(true).index())); },
      {"gather", "UInt32", "i32"});
  expect_error<TypeError>(
      [&] { detail::dec_ref(detail::trace(Op::Gather, source.index(), UInt32{0}.index(), source.index())); },
      {"gather", "mask"});
  Index target = source.index();
  detail::inc_ref(target);
  expect_error<TypeError>(
      [&] { detail::trace_scatter(ReduceOp::None, target, Int32{1}.index(), UInt32{0}.index(), Bool(true).index()); },
      {"scatter", "different types"});
  Float float_counter = Float{0.f};
  Index counter = float_counter.index();
  detail::inc_ref(counter);
  expect_error<TypeError>([&] { detail::trace_scatter_inc(counter, UInt32{0}.index(), Bool(true).index()); },
                          {"scatter_inc", "UInt32"});
  Bool flags = Bool{true, false};
  expect_error<TypeError>([&] { scatter_add(flags, Bool(true), UInt32{0}); }, {"reductions", "Bool"});
  detail::dec_ref(target);
  detail::dec_ref(counter);
}

TEST(Errors, ReadsOutOfRange) {
  Float a = Float{1.f, 2.f};
  expect_error<IndexError>([&] { a.read(2); }, {"read", "index 2", "2 elements"});
  expect_error<SizeError>([&] { a.item(); }, {"item", "2 elements"});
}

TEST(Errors, EmptyAndFreedArrays) {
  Float empty;
  expect_error<ValueError>([&] { Float b = empty + 1.f; }, {"Add", "empty"});
  expect_error<ValueError>([&] { empty.read(0); }, {"read", "empty"});
  expect_error<ValueError>([&] { eval(empty * 2.f); }, {"empty"});
}

TEST(Errors, BadSizesAndSteps) {
  expect_error<ValueError>([] { arange<Int32>(0, 10, 0); }, {"arange", "step"});
  expect_error<SizeError>([] { empty<Float>(size_t(1) << 41); }, {"empty", "2^40"});
  expect_error<SizeError>([] { set_block_size(3); }, {"set_block_size", "packet width"});
  expect_error<SizeError>([] { Float::wrap(nullptr, 4); }, {"wrap", "null"});
  expect_error<SizeError>([] { block_sum(Float{1.f}, 0); }, {"block_sum", "at least 1"});
}

TEST(Errors, AllocationFailureIsBadAlloc) {
  // 2^39 floats = 2 TiB: more than this machine can commit.
  EXPECT_THROW(empty<Float>(size_t(1) << 39), std::bad_alloc);
  try {
    empty<Float64>(size_t(1) << 39);
  } catch (const std::bad_alloc& e) {
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
  }
}

TEST(Errors, HorizontalOpsCheckTypes) {
  expect_error<TypeError>([] { detail::dec_ref(detail::reduce(detail::Reduction::Sum, Bool{true}.index())); },
                          {"Bool", "any()"});
  expect_error<TypeError>([] { detail::dec_ref(detail::compress(Float{1.f}.index())); }, {"compress", "Bool"});
  expect_error<TypeError>([] { detail::dec_ref(detail::prefix_sum(Bool{true}.index(), false)); },
                          {"prefix_sum", "Bool"});
}

TEST(Errors, StateStaysConsistentAfterErrors) {
  Float a = arange<Float>(3);
  try {
    Float b = a + arange<Float>(4);
  } catch (const SizeError&) {}
  EXPECT_EQ((a + 1.f).read(2), 3.f);
  EXPECT_EQ(detail::verify_ir(), "");
}
