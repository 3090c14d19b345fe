#pragma once

#include "planners/layout.h"

namespace brisk::planners {

// Disjoint storage groups, as in PyTorch Static Runtime's / NativeRT's
// DisjointStorageGroups: buffers are taken largest first and each joins the first group
// none of whose members conflict with it (else opens a new group). All members of a group
// share the group's bytes at one offset; group size = its largest (= first) member;
// groups are laid back to back, so the slab is the sum of group maxima. Simple and
// predictable, but it cannot pack a small buffer beside another inside a big group.
LayoutPlan storageGroupsLayout(const PlanningProblem& problem);

}  // namespace brisk::planners
