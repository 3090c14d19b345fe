#pragma once
// exp / sigmoid / tanh on eight floats for the recurrent gate loops (lstm_gates.cc,
// gru_gates.cc): the shared AVX2 vector math of math_avx2.h, under the names the gate
// loops use. Like there, every function carries its own target attribute; the callers
// reach these only after cpuHasAvx2Fma() (cpu_features.h) said yes.
//
// Cephes' single-precision polynomials, a few ulp from the correctly rounded values
// (tests/ops/lstm_gates_test.cc and gru_gates_test.cc bound the difference to std::).
#include "ops_cpu/simd/math_avx2.h"

namespace brisk::ops_cpu::out::avx2 {

using vmath::exp8;
using vmath::sigmoid8;
using vmath::tanh8;

}  // namespace brisk::ops_cpu::out::avx2
