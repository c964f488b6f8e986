// Kiln's own declarations of the CUDA driver (src/backend/cuda/driver_api.h) and of cuBLAS
// (src/backend/cuda/cublas.h) against the toolkit's cuda.h and cublas_api.h, at compile time: every function of the
// list has the parameters of the exported symbol it is loaded from (compared structurally: integers and enums by size
// and signedness, handles as opaque pointers), and every constant has cuda.h's value. Built only where the toolkit is
// installed (tests/CMakeLists.txt); compiling is the test.
#include <cublas_api.h>
#include <cuda.h>

#include <gtest/gtest.h>

#include "backend/cuda/cublas.h"
#include "backend/cuda/driver_api.h"

#include <type_traits>

namespace {

template <size_t Size, bool Signed> struct Integer {};
struct Opaque {};  ///< a handle: a pointer to an incomplete struct
template <typename T> struct Pointer {};

/// The ABI of a type: what a call passes, whatever the type's name.
template <typename T, typename = void> struct Abi {
  using type = T;
};
template <typename T> struct Abi<T, std::enable_if_t<std::is_integral_v<T> || std::is_enum_v<T>>> {
  using type = Integer<sizeof(T), std::is_signed_v<std::conditional_t<std::is_enum_v<T>, int, T>>>;
};
template <typename T> struct Abi<T*, void> {
  using pointee = std::remove_cv_t<T>;
  using type = std::conditional_t<std::is_class_v<pointee>, Opaque, Pointer<typename Abi<pointee>::type>>;
};
template <typename R, typename... A> struct Abi<R (*)(A...), void> {
  using type = Pointer<typename Abi<R>::type(typename Abi<A>::type...)>;
};

template <typename Kiln, typename Toolkit> constexpr bool same_abi =
    std::is_same_v<typename Abi<Kiln>::type, typename Abi<Toolkit>::type>;

#define KILN_CHECK_SIGNATURE(field, symbol, parameters)                                        \
  static_assert(same_abi<decltype(kiln::detail::cuda::DriverApi::field), decltype(&::symbol)>, \
                #symbol ": Kiln's declaration differs from cuda.h's");
KILN_CUDA_DRIVER_FUNCTIONS(KILN_CHECK_SIGNATURE)
#undef KILN_CHECK_SIGNATURE

#define KILN_CHECK_CUBLAS_SIGNATURE(field, symbol, parameters)                                 \
  static_assert(same_abi<decltype(kiln::detail::cuda::CublasApi::field), decltype(&::symbol)>, \
                #symbol ": Kiln's declaration differs from cublas_api.h's");
KILN_CUBLAS_FUNCTIONS(KILN_CHECK_CUBLAS_SIGNATURE)
#undef KILN_CHECK_CUBLAS_SIGNATURE

namespace kc = kiln::detail::cuda;
static_assert(kc::CUBLAS_STATUS_SUCCESS == ::CUBLAS_STATUS_SUCCESS);
static_assert(kc::CUBLAS_OP_N == ::CUBLAS_OP_N);
static_assert(kc::CUBLAS_OP_T == ::CUBLAS_OP_T);
static_assert(kc::CUDA_SUCCESS == ::CUDA_SUCCESS);
static_assert(kc::CUDA_ERROR_OUT_OF_MEMORY == ::CUDA_ERROR_OUT_OF_MEMORY);
static_assert(kc::CUDA_ERROR_NOT_INITIALIZED == ::CUDA_ERROR_NOT_INITIALIZED);
static_assert(kc::CUDA_ERROR_NO_DEVICE == ::CUDA_ERROR_NO_DEVICE);
static_assert(kc::CUDA_ERROR_STUB_LIBRARY == ::CUDA_ERROR_STUB_LIBRARY);
static_assert(kc::CUDA_ERROR_INVALID_PTX == ::CUDA_ERROR_INVALID_PTX);
static_assert(kc::CUDA_ERROR_UNSUPPORTED_PTX_VERSION == ::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
static_assert(kc::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK == ::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(kc::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(kc::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(kc::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(kc::CU_JIT_INFO_LOG_BUFFER == ::CU_JIT_INFO_LOG_BUFFER);
static_assert(kc::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES == ::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
static_assert(kc::CU_JIT_ERROR_LOG_BUFFER == ::CU_JIT_ERROR_LOG_BUFFER);
static_assert(kc::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES == ::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
static_assert(kc::CU_JIT_OPTIMIZATION_LEVEL == ::CU_JIT_OPTIMIZATION_LEVEL);
static_assert(kc::CU_JIT_INPUT_PTX == ::CU_JIT_INPUT_PTX);
static_assert(kc::CU_STREAM_NON_BLOCKING == ::CU_STREAM_NON_BLOCKING);

// The comparison itself must tell types apart.
static_assert(!same_abi<int (*)(int*), CUresult (*)(size_t*)>);
static_assert(!same_abi<int (*)(unsigned), CUresult (*)(int)>);
static_assert(!same_abi<int (*)(void**), CUresult (*)(CUcontext*)>);

}  // namespace

TEST(CudaDriverAbi, KilnsDeclarationsMatchTheToolkitsHeader) {
  // Everything is checked at compile time; this records that the check was built.
  SUCCEED() << "checked against cuda.h " << CUDA_VERSION;
}
