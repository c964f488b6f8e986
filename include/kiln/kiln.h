// Kiln's umbrella header: everything a user needs.
#pragma once

#include <kiln/array.h>
#include <kiln/errors.h>
#include <kiln/math.h>
#include <kiln/matrix.h>
#include <kiln/random.h>
#include <kiln/runtime.h>
#include <kiln/types.h>
#include <kiln/vector.h>
#include <kiln/elementwise.h>
#include <kiln/vector_math.h>
#include <kiln/construct.h>
#include <kiln/reduce.h>
#include <kiln/search.h>
#include <kiln/autodiff.h>
#include <kiln/control.h>
#include <kiln/record.h>
#include <kiln/tensor.h>
#include <kiln/map.h>
