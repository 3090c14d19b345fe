#pragma once
// A chain's unary op as a oneDNN eltwise post-op.
#include <oneapi/dnnl/dnnl.hpp>

#include "delegates/onednn/fusion_chain.h"

namespace brisk::onednn {

// Appends `u` to `ops` ("none" appends nothing); throws std::runtime_error for an op
// oneDNN has no eltwise algorithm for.
void appendUnary(dnnl::post_ops& ops, const Unary& u);

}  // namespace brisk::onednn
