#pragma once
// The Fortran sgemm_ of the BLAS that ATen itself calls (MKL, inside libtorch_cpu), for
// kernels that want ATen's exact GEMM without at::cpu::addmm_out's per-call work
// (structured-kernel meta checks, output resize checks, the TensorIterator copy that
// broadcasts the bias into the result, ATen's argument normalization): a few
// microseconds per call, which is a tenth of a batch-1 MLP layer.
//
// Resolved once at plugin registration through libtorch_cpu's own handle, i.e. the
// symbol ATen's cpublas::gemm binds to; a kernel falls back to at::cpu::addmm_out when
// it is not found (e.g. a libtorch built with another BLAS, or none).
#include <cstdint>

namespace brisk::ops_cpu::out {

// Resolves sgemm_; idempotent, thread-safe.
void initBlas();
bool haveBlasSgemm();

// Column-major C[m, n] = alpha * op(A) op(B) + beta * C with trans 'N'/'T' — the BLAS
// call, argument for argument. The caller guarantees haveBlasSgemm() and that all
// dimensions fit in int.
void blasSgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace brisk::ops_cpu::out
