#pragma once
// Liveness of one block's values over its steps (one step per node), computed once at
// load and shared by the serial executor's release points, the memory planner's managed
// ranges and the parallel plan's edges and release counters, so all three agree on
// when a value dies.
//
// A step's reads include everything its sub-blocks read (their nodes' inputs and their
// returns): a value used inside an If/Loop body is live through the enclosing step.
//
// The release rule: a value defined in this block (a param or a node output) is
// released after its last use unless something after the block needs it: a retained
// out-variant output (reused next run) or one of the block's results (its consumer reads
// them after the block ends). Constants are never released. An output nothing reads
// dies right after its producer.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace brisk {

class Block;
class Value;

struct ValueLiveness {
  static constexpr uint32_t kNoStep = UINT32_MAX;
  uint32_t def = kNoStep;       // producing step; kNoStep for the block's params
  uint32_t last_use = kNoStep;  // last reading step; def when never read
  std::vector<uint32_t> readers;  // distinct reading steps, ascending
  bool released = false;          // the release rule applies (released after last_use)
};

class BlockLiveness {
 public:
  // retained: per value id, the plan's retained out-variant outputs.
  BlockLiveness(const Block& block, const std::vector<uint8_t>& retained);

  size_t numSteps() const { return reads_.size(); }
  // The values step `i` reads, each once, in first-read order.
  const std::vector<const Value*>& reads(size_t i) const { return reads_[i]; }
  // Value ids released after step `i`, ascending.
  const std::vector<uint32_t>& releasedAfter(size_t i) const { return released_after_[i]; }
  // A value defined in this block; null for outer values and constants.
  const ValueLiveness* find(uint32_t id) const {
    auto it = values_.find(id);
    return it == values_.end() ? nullptr : &it->second;
  }

 private:
  std::vector<std::vector<const Value*>> reads_;
  std::vector<std::vector<uint32_t>> released_after_;
  std::unordered_map<uint32_t, ValueLiveness> values_;
};

}  // namespace brisk
