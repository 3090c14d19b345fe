#pragma once
// Vector math on eight floats (AVX2 + FMA), in brisk::ops_cpu::vmath::avx2: the
// primitives of vec_avx2.inc and the functions of vec_math.inc (expv, sigmoidv, tanhv,
// logv, erfv, erfcv, geluErfv; accuracy there). Shared by the fused elementwise
// interpreter (pointwise_program.cc) and the recurrent gate loops (lstm_gates.cc,
// gru_gates.cc). Everything here is compiled for AVX2 + FMA whatever the including
// translation unit's flags, so a baseline x86-64 file may include it; callers reach it
// only after cpuHasAvx2Fma() (cpu_features.h) said yes.
#include <immintrin.h>

// The helpers are always inlined into target-specific callers, so the AVX
// argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx2,fma")

#define BRISK_VEC_INLINE __attribute__((always_inline)) inline
namespace brisk::ops_cpu::vmath::avx2 {
#include "ops_cpu/simd/vec_avx2.inc"
#include "ops_cpu/simd/vec_math.inc"
}  // namespace brisk::ops_cpu::vmath::avx2
#undef BRISK_VEC_INLINE

#pragma GCC pop_options
#pragma GCC diagnostic pop
