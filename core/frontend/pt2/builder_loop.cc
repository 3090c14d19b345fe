// torch.ops.higher_order.while_loop -> prim::Loop.
//
// while_loop(cond_graph, body_graph, carried, additional) runs
//     while cond_graph(*carried, *additional): carried = body_graph(*carried, *additional)
// and returns the final carried values. prim::Loop(max_trips, initial_condition,
// carried...) runs its body block (trip, carried...) -> (condition, carried...) while
// the condition holds, so the loop becomes:
//
//     c0 = Bool(cond_graph(carried, additional))                 (inlined before the loop)
//     out = prim::Loop(INT64_MAX, c0, carried...)
//       block(trip, c...):  n... = body_graph(c..., additional)
//                           keep = Bool(cond_graph(n..., additional))
//                           -> (keep, n...)
//
// "Body then cond" keeps everything one iteration needs in one block: the body block has
// its own memory plan (its intermediates and the condition's live in its slab, reused
// every trip) and nothing runs per trip outside it. The alternative, a first block that
// evaluates the condition and then an If around the body, would split one iteration
// over two blocks and add a node per trip. The cond subgraph is converted twice; it is
// typically one comparison. `additional` (lifted weights, outer tensors) are read by the
// body directly, as brisk's blocks read outer values. A carried value that is a load-time
// constant (the folded zeros(()) a counter starts from) is the loop's output after zero
// trips; the own_constant_outputs graph pass (core/graph/builtin_passes.h) clones such
// outputs, for this frontend and TorchScript's alike.
#include <algorithm>
#include <limits>

#include "core/common/error.h"
#include "core/frontend/pt2/builder.h"

namespace brisk::pt2 {
namespace {

const Json& subgraph(const Json& named_arg, const std::string& what) {
  return at(at(at(named_arg, "arg", what), "as_graph", what), "graph", what);
}

// The program's record of tensor `name` of `graph` (its tensor_values entry), or null
// when the graph has none (then only the runtime's checks apply).
const Json* tensorMeta(const Json& graph, const std::string& name) {
  auto values = graph.find("tensor_values");
  if (values == graph.end() || !values->is_object()) return nullptr;
  auto it = values->find(name);
  return it == values->end() || !it->is_object() ? nullptr : &*it;
}

// The name of a subgraph output that is a tensor, or "" for another kind.
std::string tensorName(const Json& arg) {
  if (!arg.is_object() || arg.size() != 1 || !arg.contains("as_tensor")) return "";
  const Json& t = arg["as_tensor"];
  return t.is_object() && t.contains("name") && t["name"].is_string() ? t["name"].get<std::string>() : "";
}

c10::ScalarType dtypeOf(const Json& meta, const std::string& what) {
  return scalarType(intOf(at(meta, "dtype", what), what + ".dtype"));
}

// "Float[3, 16]" (a symbolic dim prints as '?').
std::string describeTensor(const Json& meta, const std::string& what) {
  std::string s = std::string(c10::toString(dtypeOf(meta, what))) + "[";
  const Json& sizes = arrayAt(meta, "sizes", what);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += sizes[i].contains("as_int") ? std::to_string(intOf(sizes[i]["as_int"], what + ".sizes")) : "?";
  }
  return s + "]";
}

// Elements of a tensor whose sizes are all static; -1 when a dim is symbolic.
int64_t staticNumel(const Json& meta, const std::string& what) {
  int64_t n = 1;
  for (const Json& d : arrayAt(meta, "sizes", what)) {
    if (!d.contains("as_int")) return -1;
    n *= intOf(d["as_int"], what + ".sizes");
  }
  return n;
}

}  // namespace

void Builder::checkLoopGraphs(const Json& cond, const Json& body, size_t carried) {
  const Json& results = arrayAt(cond, "outputs", "while_loop cond_graph");
  const std::string kCondRule = "while_loop's cond_graph must return one one-element bool tensor";
  if (results.size() != 1) throw Error(kCondRule + "; it returns " + std::to_string(results.size()) + " values");
  const std::string pred = tensorName(results[0]);
  if (pred.empty()) throw Error(kCondRule + "; it returns a " + unionKind(results[0], "cond_graph output"));
  if (const Json* meta = tensorMeta(cond, pred)) {
    const std::string what = "cond_graph output '" + pred + "'";
    if (dtypeOf(*meta, what) != c10::ScalarType::Bool || staticNumel(*meta, what) != 1)
      throw Error(kCondRule + "; it returns '" + pred + "', " + describeTensor(*meta, what));
  }

  // while_loop requires each new carried value to have its old one's dtype and shape
  // (torch.export checks it when tracing); a program that breaks that is refused here,
  // not left to compute with a drifting dtype. Dims may be symbolic: ranks are compared.
  const Json& params = arrayAt(body, "inputs", "while_loop body_graph");
  const Json& next = arrayAt(body, "outputs", "while_loop body_graph");
  if (next.size() != carried || params.size() < carried)
    throw Error("while_loop's body_graph returns " + std::to_string(next.size()) + " values for " +
                std::to_string(carried) + " carried inputs");
  for (size_t i = 0; i < carried; ++i) {
    const std::string in = tensorName(params[i]), out = tensorName(next[i]);
    if (out.empty())
      throw Error("while_loop's body_graph returns a " + unionKind(next[i], "body_graph output") +
                  " for carried input " + std::to_string(i) + ", not a tensor");
    const Json* a = in.empty() ? nullptr : tensorMeta(body, in);
    const Json* b = tensorMeta(body, out);
    if (!a || !b) continue;
    const std::string what = "body_graph output '" + out + "'";
    if (dtypeOf(*a, in) != dtypeOf(*b, what) || arrayAt(*a, "sizes", in).size() != arrayAt(*b, "sizes", what).size())
      throw Error("while_loop's body_graph turns carried input " + std::to_string(i) + " ('" + in + "', " +
                  describeTensor(*a, in) + ") into '" + out + "', " + describeTensor(*b, what) +
                  ": carried values must keep their dtype and shape");
  }
}

void Builder::convertWhileLoop(const Json& node) {
  const Json& ins = arrayAt(node, "inputs", "while_loop");
  if (ins.size() != 4)
    throw Error("while_loop node has " + std::to_string(ins.size()) +
                " inputs, expected 4 (cond_graph, body_graph, carried_inputs, additional_inputs)");
  const Json& cond = subgraph(ins[0], "while_loop cond_graph");
  const Json& body = subgraph(ins[1], "while_loop body_graph");
  const std::vector<Value*> carried = tensorList(at(ins[2], "arg", "while_loop carried"), "while_loop carried_inputs");
  const std::vector<Value*> additional =
      tensorList(at(ins[3], "arg", "while_loop additional"), "while_loop additional_inputs");
  if (carried.empty()) throw Error("while_loop has no carried inputs");
  const Json& outs = arrayAt(node, "outputs", "while_loop");
  if (outs.size() != carried.size())
    throw Error("while_loop node has " + std::to_string(outs.size()) + " outputs for " +
                std::to_string(carried.size()) + " carried inputs");
  checkLoopGraphs(cond, body, carried.size());

  std::vector<Value*> operands = carried;
  operands.insert(operands.end(), additional.begin(), additional.end());
  Value* first = toBool(inlineSubgraph(cond, operands, block_, "while_loop's cond_graph").at(0), block_);

  NodeSpec loop;
  loop.kind = "prim::Loop";
  loop.inputs = {g_->addConstant(c10::IValue(std::numeric_limits<int64_t>::max()), c10::IntType::get()), first};
  loop.inputs.insert(loop.inputs.end(), carried.begin(), carried.end());
  for (size_t i = 0; i < carried.size(); ++i) loop.outputs.emplace_back(c10::TensorType::get(), "");
  Node* n = block_->appendNode(std::move(loop));

  Block* trip = n->addBlock();
  trip->addParam(c10::IntType::get(), "trip");  // the trip count: while_loop has none
  for (size_t i = 0; i < carried.size(); ++i) operands[i] = trip->addParam(c10::TensorType::get(), "");
  std::vector<Value*> next = inlineSubgraph(body, operands, trip, "while_loop's body_graph");
  std::copy(next.begin(), next.end(), operands.begin());
  Value* again = toBool(inlineSubgraph(cond, operands, trip, "while_loop's cond_graph").at(0), trip);
  trip->addReturn(again);
  for (Value* v : next) trip->addReturn(v);
  for (size_t i = 0; i < outs.size(); ++i) bindOutput(outs[i], n->output(i));
}

}  // namespace brisk::pt2
