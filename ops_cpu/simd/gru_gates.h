#pragma once
// The elementwise half of one GRU time step, in PyTorch's gate order r, z, n and with
// its formula (ATen's GRU cell, which nn.GRU and torch.export's core IR both follow):
// from the recurrent GEMM's result gh [rows, 3H] (b_hh included), this step's input
// projection gx [rows, 3H] (b_ih included) and the state h [rows, H]:
//   r = sigmoid(gh_r + gx_r);  z = sigmoid(gh_z + gx_z)
//   n = tanh(gx_n + gh_n * r)           (b_hn stays inside the product with r)
//   h' = (h - n) * z + n                (ATen's rounding: a sub, a mul, an add)
// Row-major contiguous operands; h_out must not overlap the inputs.
//
// Why its own kernel: as for the LSTM gates (lstm_gates.h), two exp and a tanh per
// element through std:: cost more than the GEMM at batch 1; the AVX2 path evaluates
// them eight at a time (math_avx2.h), a few ulp from std::.
#include <cstdint>

namespace brisk::ops_cpu::out {

// AVX2 + FMA when the CPU has them, else std::exp / std::tanh per element.
void gruGates(const float* gh, const float* gx, const float* h, float* h_out, int64_t rows, int64_t hidden);

// Always std::exp / std::tanh (the reference the tests compare the vector path with).
void gruGatesScalar(const float* gh, const float* gx, const float* h, float* h_out, int64_t rows, int64_t hidden);

}  // namespace brisk::ops_cpu::out
