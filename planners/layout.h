// Common vocabulary of the memory-layout planners: a planning problem (buffer sizes plus
// a "may not share bytes" relation) and a plan (one offset per buffer inside one slab).
// Pure C++17, no torch: the runtime converts its graph into a PlanningProblem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace brisk::planners {

// Every offset and every rounded size is a multiple of this (cache line / AVX-512 width).
constexpr size_t kAlignment = 64;

struct AllocationSpec {
  size_t size;     // bytes requested (0 allowed: gets offset 0, occupies nothing)
  uint32_t first;  // first step at which the buffer is live (its producer)
  uint32_t last;   // last step at which it is live (its last use), inclusive; first <= last
};

// Two buffers may share bytes only when they never live at the same time. For a serial
// schedule that is "intervals [first,last] do not intersect"; a parallel executor passes
// a stricter relation (from DAG reachability), so algorithms must only use `conflict`.
// Must be symmetric.
using ConflictFn = std::function<bool(size_t a, size_t b)>;

struct PlanningProblem {
  std::vector<AllocationSpec> specs;
  ConflictFn conflicts;  // may be empty: then interval intersection is used
  // Granularity of offsets and sizes. Only tests change it (alignment 1 reproduces the
  // paper's unit-sized examples); must be >= 1.
  size_t alignment = kAlignment;

  bool conflict(size_t a, size_t b) const;
  size_t alignedSize(size_t i) const;
};

struct LayoutPlan {
  std::vector<size_t> offsets;  // one per spec, multiple of the alignment
  size_t total_size = 0;        // slab bytes needed (multiple of the alignment)
};

using LayoutAlgorithm = std::function<LayoutPlan(const PlanningProblem&)>;

size_t alignUp(size_t n, size_t alignment = kAlignment);

// Largest total of simultaneously live (aligned) bytes over the serial steps: no layout of
// the serial schedule (or of any stricter conflict relation) can use less.
size_t lowerBound(const std::vector<AllocationSpec>& specs, size_t alignment = kAlignment);

// Checks a plan: one offset per spec, every offset and the total aligned, each buffer
// within total_size, and no two conflicting non-empty buffers overlap in bytes. Returns
// an empty string when valid, else a description of the first problem found.
std::string validatePlan(const PlanningProblem& problem, const LayoutPlan& plan);

}  // namespace brisk::planners
