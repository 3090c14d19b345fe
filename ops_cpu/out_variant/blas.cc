#include "ops_cpu/out_variant/blas.h"

#include <dlfcn.h>

#include <atomic>

namespace brisk::ops_cpu::out {
namespace {

// Reference BLAS Fortran ABI: every argument by pointer.
using SgemmFn = void (*)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                         const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                         const float* beta, float* c, const int* ldc);

std::atomic<SgemmFn> g_sgemm{nullptr};

}  // namespace

void initBlas() {
  if (g_sgemm.load(std::memory_order_acquire)) return;
  // dlsym on libtorch_cpu's handle searches it and then its dependencies, i.e. finds
  // the sgemm_ ATen's cpublas::gemm is bound to. RTLD_NOLOAD: it is already loaded
  // (the plugin links libtorch); the reference is never released, like the library.
  void* h = dlopen("libtorch_cpu.so", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return;
  if (void* sym = dlsym(h, "sgemm_")) g_sgemm.store(reinterpret_cast<SgemmFn>(sym), std::memory_order_release);
}

bool haveBlasSgemm() { return g_sgemm.load(std::memory_order_relaxed) != nullptr; }

void blasSgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int m_ = static_cast<int>(m), n_ = static_cast<int>(n), k_ = static_cast<int>(k);
  const int lda_ = static_cast<int>(lda), ldb_ = static_cast<int>(ldb), ldc_ = static_cast<int>(ldc);
  g_sgemm.load(std::memory_order_relaxed)(&transa, &transb, &m_, &n_, &k_, &alpha, a, &lda_, b, &ldb_, &beta, c,
                                          &ldc_);
}

}  // namespace brisk::ops_cpu::out
