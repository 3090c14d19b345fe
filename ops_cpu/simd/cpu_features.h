#pragma once
// CPU features of the hand-vectorized kernels (depthwise_nchw, small_gemm), read once
// per process. Header-only: the small GEMM library includes it without torch.
namespace brisk::ops_cpu::out {

// AVX2 and FMA: the instruction sets those kernels are compiled for.
inline bool cpuHasAvx2Fma() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  }();
  return yes;
}

// AVX-512 (F): CPUs where the BLAS and oneDNN have wider kernels than brisk's AVX2 ones.
inline bool cpuHasAvx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}

}  // namespace brisk::ops_cpu::out
