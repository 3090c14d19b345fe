#pragma once
// Vector math on sixteen floats (AVX-512F), in brisk::ops_cpu::vmath::avx512: the
// primitives of vec_avx512.inc and the functions of vec_math.inc, the same code as
// math_avx2.h on twice the lanes, so the results are bit-identical to it. Used by the
// fused elementwise interpreter's AVX-512 path (pointwise_program.cc). Compiled for
// AVX-512F whatever the including translation unit's flags; callers reach it only after
// cpuHasAvx512() (cpu_features.h) said yes.
#include <immintrin.h>

// The helpers are always inlined into target-specific callers, so the AVX-512
// argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx512f,fma")

#define BRISK_VEC_INLINE __attribute__((always_inline)) inline
namespace brisk::ops_cpu::vmath::avx512 {
#include "ops_cpu/simd/vec_avx512.inc"
#include "ops_cpu/simd/vec_math.inc"
}  // namespace brisk::ops_cpu::vmath::avx512
#undef BRISK_VEC_INLINE

#pragma GCC pop_options
#pragma GCC diagnostic pop
