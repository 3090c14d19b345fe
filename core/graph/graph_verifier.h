#pragma once
// Structural checks of a brisk Graph, run after conversion and in tests:
// every value is defined before use (respecting block scoping), ids are dense and
// unique, sub-block arity matches its node (If: 2 blocks with returns matching the
// outputs; Loop: body params/returns matching carried values), and each input's type
// is a subtype of the schema argument it binds to, and every value's use list names
// exactly the reads in the graph.
#include <string>
#include <vector>

namespace brisk {

class Graph;

// Empty when the graph is well formed; otherwise one message per problem.
std::vector<std::string> verifyGraph(const Graph& graph);

// Throws brisk::Error listing the problems, if any.
void checkGraph(const Graph& graph);

}  // namespace brisk
