#pragma once
// Picking between oneDNN's kernels for one problem by timing them, once per input shape.
//
// oneDNN ranks its implementations by heuristics made for the CPUs it targets; on the
// int8 convolutions of resnet18 the ranking is wrong by up to 5% in either direction,
// and which way depends on the CPU and the shape (Xeon, AVX-512 VNNI, batch 8, one
// thread: brgconv 2675 vs jit_int8 2542 us on 512 channels at 7x7, 2568 vs 2941 on 128
// at 28x28; on a Zen 4 jit_int8 won only on stride-1 depthwise layers). So a partition
// that has more than one candidate times each on scratch buffers and keeps the faster.
#include <oneapi/dnnl/dnnl.hpp>

#include <vector>

namespace brisk::onednn {

// Seconds for one run of `pd`'s primitive: the best of `runs` after one warm-up, on
// fresh buffers for its source, weights, destination, bias and scratchpad (contents are
// irrelevant: the int8 kernels' speed does not depend on values), `constants` bound as
// given (scales, zero points), and `other` (may be null) as the binary post-op's operand
// at `other_arg`. Runs on at::get_num_threads() threads, as the partition's calls do.
double timeConvolution(const dnnl::convolution_forward::primitive_desc& pd, const std::vector<dnnl_exec_arg_t>& constants,
                       const dnnl::memory::desc* other, int other_arg, int runs = 2);

}  // namespace brisk::onednn
