#include "core/archive_check.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/error.h"

namespace brisk {
namespace {

namespace jit = torch::jit;

// Bytes of storage the view reads, or an error text; computed in 128 bits so huge
// sizes or strides from a damaged pickle cannot wrap around.
std::string viewProblem(const at::Tensor& t) {
  if (!t.defined() || !t.has_storage()) return "";  // sparse, mkldnn: nothing to bound
  if (t.numel() == 0) return "";
  // An empty data/N record gives a storage with no memory behind it at all.
  if (t.storage().data() == nullptr) return "has no data (its storage record is empty)";
  __int128 last = t.storage_offset();
  if (t.storage_offset() < 0) return "negative storage offset";
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0) return "negative stride";
    last += static_cast<__int128>(t.size(d) - 1) * t.stride(d);
  }
  __int128 need = (last + 1) * static_cast<__int128>(t.dtype().itemsize());
  if (need > static_cast<__int128>(t.storage().nbytes()))
    return "needs " + (need >> 63 ? std::string("over 2^63") : std::to_string(static_cast<int64_t>(need))) +
           " bytes of storage, the archive has " + std::to_string(t.storage().nbytes());
  return "";
}

class TensorWalker {
 public:
  explicit TensorWalker(const std::string& model) : model_(model) {}

  void visit(const c10::IValue& v, const std::string& where, int depth = 0) {
    // Deeper than any real module; also keeps a damaged, self-nesting pickle finite.
    if (depth > 200) throw Error(Error::Where{model_, "", ""}, "attribute '" + where + "' is nested too deeply");
    if (v.isTensor()) {
      std::string problem = viewProblem(v.toTensor());
      if (!problem.empty())
        throw Error(Error::Where{model_, "", ""},
                    "corrupt archive: tensor '" + where + "' " + problem + " (sizes " +
                        c10::str(v.toTensor().sizes()) + ", strides " + c10::str(v.toTensor().strides()) + ")");
    } else if (v.isObject()) {
      const auto& obj = v.toObjectRef();
      if (!seen_.insert(&obj).second) return;
      const auto& type = obj.type();
      for (size_t i = 0; i < obj.slots().size(); ++i) {
        std::string name = i < type->numAttributes() ? type->getAttributeName(i) : std::to_string(i);
        visit(obj.slots()[i], where.empty() ? name : where + "." + name, depth + 1);
      }
    } else if (v.isList()) {
      const auto& list = v.toListRef();
      for (size_t i = 0; i < list.size(); ++i) visit(list[i], where + "[" + std::to_string(i) + "]", depth + 1);
    } else if (v.isTuple()) {
      const auto& elems = v.toTupleRef().elements();
      for (size_t i = 0; i < elems.size(); ++i) visit(elems[i], where + "[" + std::to_string(i) + "]", depth + 1);
    } else if (v.isGenericDict()) {
      for (const auto& kv : v.toGenericDict()) visit(kv.value(), where + "[...]", depth + 1);
    }
  }

  // Tensor constants of the archive's code (constants.pkl) live in the graphs.
  void visitBlock(const jit::Block* b, const std::string& fn) {
    for (const jit::Node* n : b->nodes()) {
      if (n->kind() == c10::prim::Constant && n->hasAttribute(c10::attr::value) &&
          n->kindOf(c10::attr::value) == jit::AttributeKind::t)
        visit(n->t(c10::attr::value), "constant in " + fn);
      for (const jit::Block* sb : n->blocks()) visitBlock(sb, fn);
    }
  }

 private:
  const std::string& model_;
  std::unordered_set<const void*> seen_;
};

uint32_t littleEndian(std::string_view b, size_t at, int width) {
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

size_t pickleNestingDepth(std::string_view p) {
  constexpr long kMark = -1;
  std::vector<long> stack;  // nesting depth of each value on the unpickler's stack
  std::unordered_map<uint32_t, long> memo;
  size_t deepest = 0;
  auto push = [&](long d) {
    stack.push_back(d);
    deepest = std::max(deepest, static_cast<size_t>(d));
  };
  auto pop = [&]() -> long {
    if (stack.empty()) return 0;
    long d = stack.back();
    stack.pop_back();
    return d < 0 ? 0 : d;
  };
  auto popToMark = [&]() -> long {
    long d = 0;
    while (!stack.empty() && stack.back() != kMark) d = std::max(d, pop());
    if (!stack.empty()) stack.pop_back();
    return d;
  };
  auto raiseTop = [&](long inner) {  // the top container now holds a value `inner` deep
    if (stack.empty()) return;
    stack.back() = std::max(stack.back(), inner + 1);
    deepest = std::max(deepest, static_cast<size_t>(stack.back()));
  };
  for (size_t at = 0; at < p.size();) {
    const uint8_t op = static_cast<uint8_t>(p[at]);
    const size_t rest = p.size() - at - 1;
    size_t operand = 0;
    auto counted = [&](int width) {
      return rest < static_cast<size_t>(width) ? rest + 1 : width + size_t{littleEndian(p, at + 1, width)};
    };
    switch (op) {
      case 0x80: operand = 1; break;                                   // PROTO
      case 'K': case 'M': case 'J': case 'G': case 'N': case 0x88: case 0x89:
        operand = op == 'K' ? 1 : op == 'M' ? 2 : op == 'J' ? 4 : op == 'G' ? 8 : 0;
        push(0);
        break;
      case 0x8a: operand = counted(1); push(0); break;                 // LONG1
      case 'X': case 'B': case 'T': operand = counted(4); push(0); break;
      case 'C': case 'U': case 0x8c: operand = counted(1); push(0); break;
      case 'c': {                                                      // GLOBAL module\nname\n
        size_t nl = p.find('\n', at + 1);
        nl = nl == std::string_view::npos ? nl : p.find('\n', nl + 1);
        if (nl == std::string_view::npos) return deepest;
        operand = nl - at;
        push(0);
        break;
      }
      case '}': case ']': case ')': push(1); break;
      case '(': stack.push_back(kMark); break;
      case 't': push(popToMark() + 1); break;
      case 0x85: push(pop() + 1); break;                               // TUPLE1
      case 0x86: { long a = pop(), b = pop(); push(std::max(a, b) + 1); break; }
      case 0x87: { long a = pop(), b = pop(), c = pop(); push(std::max({a, b, c}) + 1); break; }
      case 'a': raiseTop(pop()); break;                                // APPEND
      case 's': { long v = pop(), k = pop(); raiseTop(std::max(k, v)); break; }
      case 'e': case 'u': raiseTop(popToMark()); break;                // APPENDS, SETITEMS
      case 'R': { long args = pop(); pop(); push(args + 1); break; }   // REDUCE
      case 'b': raiseTop(pop()); break;                                // BUILD
      case 'Q': pop(); push(0); break;                                 // BINPERSID
      case '0': pop(); break;                                          // POP
      case '1': popToMark(); break;                                    // POP_MARK
      case '2': push(stack.empty() ? 0 : std::max(stack.back(), 0L)); break;  // DUP
      case 'q': case 'r':                                              // BINPUT, LONG_BINPUT
        operand = op == 'q' ? 1 : 4;
        if (rest >= operand && !stack.empty()) memo[littleEndian(p, at + 1, operand)] = std::max(stack.back(), 0L);
        break;
      case 'h': case 'j': {                                            // BINGET, LONG_BINGET
        operand = op == 'h' ? 1 : 4;
        auto it = rest >= operand ? memo.find(littleEndian(p, at + 1, operand)) : memo.end();
        push(it == memo.end() ? 0 : it->second);
        break;
      }
      case '.': return deepest;                                        // STOP
      default: return deepest;
    }
    if (operand > rest) return deepest;
    at += 1 + operand;
  }
  return deepest;
}

void checkArchivePickles(const std::string& path) {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  std::vector<std::string> records;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
    records = reader->getAllRecords();
  } catch (const std::exception&) {
    return;  // not a readable zip: torch::jit::load says why
  }
  for (const std::string& name : records) {
    if (!endsWith(name, ".pkl") && !endsWith(name, ".debug_pkl")) continue;
    size_t depth = 0;
    try {
      auto [data, size] = reader->getRecord(name);
      depth = pickleNestingDepth(std::string_view(static_cast<const char*>(data.get()), size));
    } catch (const std::exception&) {
      continue;  // an unreadable record (bad CRC, ...): torch::jit::load says why
    }
    if (depth > kMaxPickleNesting)
      throw Error(Error::Where{path, "", ""}, "corrupt archive: record '" + name + "' nests values " +
                                                  std::to_string(depth) + " levels deep (at most " +
                                                  std::to_string(kMaxPickleNesting) + " supported)");
  }
}

void checkTensorsFitStorage(const c10::IValue& value, const std::string& file, const std::string& what) {
  TensorWalker(file).visit(value, what);
}

void checkLoadedTensors(const jit::Module& module, const std::string& model) {
  TensorWalker walker(model);
  walker.visit(module._ivalue(), "");
  for (jit::Function* f : module._ivalue()->compilation_unit()->get_functions()) {
    if (jit::GraphFunction* gf = jit::tryToGraphFunction(*f))
      walker.visitBlock(gf->graph()->block(), f->qualname().qualifiedName());
  }
}

}  // namespace brisk
