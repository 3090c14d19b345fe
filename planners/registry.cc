#include "planners/registry.h"

#include <stdexcept>

#include "planners/best_of_orders.h"
#include "planners/bump.h"
#include "planners/greedy_by_breadth.h"
#include "planners/greedy_by_size.h"
#include "planners/storage_groups.h"

namespace brisk::planners {

PlannerRegistry& PlannerRegistry::global() {
  // Function-local static: thread-safe initialization, and referencing global() is what
  // pulls this object file (and the built-ins) into a static link.
  static PlannerRegistry* registry = [] {
    auto* r = new PlannerRegistry();  // never destroyed: usable during static teardown
    r->add("bump", bumpLayout);
    r->add("storage_groups", storageGroupsLayout);
    r->add("greedy_by_size", greedyBySizeLayout);
    r->add("greedy_by_breadth", greedyByBreadthLayout);
    r->add("best_of_orders", bestOfOrdersLayout);
    return r;
  }();
  return *registry;
}

void PlannerRegistry::add(std::string name, LayoutAlgorithm algorithm) {
  if (!algorithm) throw std::invalid_argument("planner '" + name + "' is empty");
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = algorithms_.emplace(std::move(name), std::move(algorithm));
  if (!inserted) {
    throw std::invalid_argument("planner '" + it->first + "' already registered");
  }
}

const LayoutAlgorithm* PlannerRegistry::lookup(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = algorithms_.find(name);
  return it == algorithms_.end() ? nullptr : &it->second;
}

std::vector<std::string> PlannerRegistry::names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& entry : algorithms_) out.push_back(entry.first);
  return out;
}

}  // namespace brisk::planners
