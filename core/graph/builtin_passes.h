#pragma once
// Core's own load-time graph passes (graph_pass.h), in the order they run:
//   eliminate_dead_code (kPassOrderSimplify): nodes whose results nothing reads and that
//       have no effect besides their results;
//   remove_eval_dropout (kPassOrderSimplify): eval_dropout.h;
//   fold_constants (kPassOrderFold): nodes whose inputs are all constants (weights and
//       what is computed from them only), computed once; counted in ModuleStats'
//       folded_nodes with the frontends' own folds;
//   eliminate_dead_code_late (kPassOrderCleanUp): the same after the folds and
//       any plugin rewrites;
//   own_constant_outputs (kPassOrderOutputs): a model output that may be one of the
//       Module's constants (a loop that ran zero times, an If branch, a returned weight)
//       is cloned, so no caller can write into the Module's tensors;
//   inplace_reuse (kPassOrderAnnotate): inplace_reuse.h; also off with
//       Options::inplace_reuse = false.
#include <cstddef>

namespace brisk {

class Graph;
class PassRegistry;

void addBuiltinPasses(PassRegistry& registry);

// The passes' bodies, for tests. Each returns how many nodes it changed.
size_t eliminateDeadCode(Graph& graph);
size_t foldConstants(Graph& graph);
size_t ownConstantOutputs(Graph& graph);  // constant_outputs.cc

}  // namespace brisk
