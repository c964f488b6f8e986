// Kiln's math library: sin cos tan sincos asin acos atan atan2 exp exp2 expm1 log log2 log1p
// pow sinh cosh tanh erf erfinv cbrt, for Float and Float64 arrays.
//
// Start reading here. Every function is ordinary traced code: range reduction,
// a minimax polynomial and select()-based handling of special values, with no
// data-dependent control flow. A call records a few dozen IR nodes that fuse into the
// surrounding kernel, and the same code serves every backend (LLVM today, a GPU later).
// Accuracy (max ULP error against glibc, per function and precision), tested domains,
// the C99 special cases covered and the offline script that fitted the coefficients are
// in docs/math.md.
//
//   common.h   polynomial evaluation, bit access, scaling by 2^n, double-word helpers
//   exp_log.h  exp exp2 expm1 log log2 log1p pow sinh cosh tanh
//   trig.h     sin cos tan sincos asin acos atan atan2
//   special.h  erf erfinv cbrt
#pragma once

#include <kiln/math/common.h>
#include <kiln/math/exp_log.h>
#include <kiln/math/special.h>
#include <kiln/math/trig.h>
