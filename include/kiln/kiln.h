// Kiln's umbrella header: everything a user needs.
#pragma once

#include <kiln/array.h>
#include <kiln/autodiff.h>
#include <kiln/construct.h>
#include <kiln/control.h>
#include <kiln/device.h>
#include <kiln/elementwise.h>
#include <kiln/errors.h>
#include <kiln/host_call.h>
#include <kiln/map.h>
#include <kiln/math.h>
#include <kiln/matrix.h>
#include <kiln/random.h>
#include <kiln/record.h>
#include <kiln/reduce.h>
#include <kiln/runtime.h>
#include <kiln/search.h>
#include <kiln/tensor.h>
#include <kiln/types.h>
#include <kiln/vector.h>
#include <kiln/vector_math.h>
