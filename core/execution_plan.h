#pragma once
// The flat, load-time-compiled form of a Graph that the executor walks.
//
// Every Value's id is its slot in the Runtime's IValue array. A Step names its kernel
// and ranges into one shared index array (inputs, outputs, slots to release after
// the step). Blocks of prim::If / prim::Loop are ExecBlocks of the same plan, so the
// whole graph shares one slot array; prim::fork subgraphs are separate child Modules.
#include <ATen/core/ivalue.h>

#include <deque>
#include <memory>
#include <vector>

#include "core/kernel.h"

namespace brisk {

class Block;
class Node;

struct Step {
  const Kernel* kernel;
  const Node* node;
  uint32_t in_begin, num_in;
  uint32_t out_begin, num_out;
  uint32_t release_begin, num_release;  // slots whose last use is this step
};

struct ExecBlock {
  const Block* source = nullptr;
  std::vector<Step> steps;
  std::vector<uint32_t> params;
  std::vector<uint32_t> returns;
  // Per return: defined inside this block, so the consumer may move it out (an outer
  // value or a constant returned from the block must be copied instead).
  std::vector<uint8_t> return_is_local;
};

struct ExecutionPlan {
  std::deque<ExecBlock> blocks;  // [0] is the graph's top block; deque keeps pointers stable
  std::vector<uint32_t> indices;  // storage for every Step's slot lists
  uint32_t num_slots = 0;
  std::vector<std::pair<uint32_t, c10::IValue>> constants;  // copied into each Runtime once
  // Out-variant outputs that never escape the run: kept in their slot between runs so
  // the kernel can write into the same tensor again.
  std::vector<uint8_t> retained;  // per slot
  // Slots cleared at the end of every run (everything but constants and retained).
  std::vector<uint32_t> cleanup;
  std::vector<std::unique_ptr<Kernel>> kernels;

  const uint32_t* ptr(uint32_t offset) const { return indices.data() + offset; }
};

}  // namespace brisk
