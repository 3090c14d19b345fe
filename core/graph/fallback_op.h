#pragma once
// What a frontend hands the fallback kernel for one node (graph.h's FallbackSource):
// the boxed operation to call and the schema it was found by. Apart from graph.h so
// that only the frontends and the fallback kernel include the operation's header.
#include <ATen/core/function_schema.h>
#include <ATen/core/stack.h>

namespace brisk {

struct FallbackOp {
  torch::jit::Operation operation;
  const c10::FunctionSchema* schema;
};

}  // namespace brisk
