#pragma once
// The elementwise half of one LSTM time step (ops_cpu::lstm_step): from the recurrent
// GEMM's result gh [rows, 4H] (bias included), this step's input projection gx
// [rows, 4H] and the cell state c [rows, H], in ATen's gate order i, f, g, o:
//   a = gh + gx;  i = sigmoid(a[:, 0:H]); f = sigmoid(a[:, H:2H]); g = tanh(a[:, 2H:3H]);
//   o = sigmoid(a[:, 3H:4H]);  c' = f * c + i * g (two rounded products, one add);
//   h' = o * tanh(c')
// Row-major contiguous operands; the outputs must not overlap the inputs.
//
// Why its own kernel: per element this is three exp and two tanh; with std::expf /
// std::tanhf they cost ~15 ns an element, more than the GEMM at batch 1. The AVX2 path
// evaluates them eight at a time with Cephes' single-precision polynomials (exp: range
// reduction by ln 2 and a degree-6 polynomial; tanh: an odd polynomial below 0.625,
// 1 - 2 / (exp(2|x|) + 1) above), a few ulp from the correctly rounded values --
// tests/ops/lstm_gates_test.cc bounds the difference to std::. Not bitwise ATen's (its
// Sleef functions round differently in the last bits).
#include <cstdint>

namespace brisk::ops_cpu::out {

// AVX2 + FMA when the CPU has them, else std::exp / std::tanh per element.
void lstmGates(const float* gh, const float* gx, const float* c, float* h_out, float* c_out, int64_t rows,
               int64_t hidden);

// Always std::exp / std::tanh (the reference the tests compare the vector path with).
void lstmGatesScalar(const float* gh, const float* gx, const float* c, float* h_out, float* c_out, int64_t rows,
                     int64_t hidden);

}  // namespace brisk::ops_cpu::out
