#include "core/frontend/archive_check.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <caffe2/serialize/inline_container.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/common/error.h"

namespace brisk {
namespace {

namespace jit = torch::jit;

size_t fileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

// An error naming a model (Where) or an inputs file (its own prefix).
Error fileError(const std::string& file, bool is_model, const std::string& message) {
  if (is_model) return Error(Error::Where{file, "", ""}, message);
  return Error("inputs file '" + file + "': " + message);
}

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
  TensorWalker(const std::string& file, bool is_model) : file_(file), is_model_(is_model) {}

  void visit(const c10::IValue& v, const std::string& where, int depth = 0) {
    // Deeper than any real module; also keeps a damaged, self-nesting pickle finite.
    if (depth > 200) throw fileError(file_, is_model_, "value '" + where + "' is nested too deeply");
    if (v.isTensor()) {
      std::string problem = viewProblem(v.toTensor());
      if (!problem.empty())
        throw fileError(file_, is_model_,
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
  const std::string& file_;
  bool is_model_;
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

PickleScan scanPickle(std::string_view p) {
  // The unpickler's stack, simulated: each entry's nesting depth and, for the few
  // values a storage reference is made of (strings, ints, globals, flat tuples of them),
  // the value itself. Containers keep no contents, so memo copies stay small.
  struct V {
    long depth = 0;  // -1: MARK
    enum Kind : uint8_t { kOther, kStr, kInt, kGlobal, kTuple } kind = kOther;
    std::string s;
    int64_t n = 0;
    std::vector<V> items;  // kTuple: only when every item is a scalar kind
  };
  PickleScan out;
  std::vector<V> stack;
  std::unordered_map<uint32_t, V> memo;
  auto note = [&](long d) { out.depth = std::max(out.depth, static_cast<size_t>(d)); };
  auto push = [&](V v) {
    note(v.depth);
    stack.push_back(std::move(v));
  };
  auto pushDepth = [&](long d) { push(V{d}); };
  auto pop = [&]() -> V {
    if (stack.empty()) return V{};
    V v = std::move(stack.back());
    stack.pop_back();
    if (v.depth < 0) v = V{};
    return v;
  };
  auto popToMark = [&]() {
    std::vector<V> items;
    while (!stack.empty() && stack.back().depth >= 0) items.push_back(pop());
    if (!stack.empty()) stack.pop_back();
    std::reverse(items.begin(), items.end());
    return items;
  };
  auto tupleOf = [&](std::vector<V> items) {
    V t{0, V::kTuple};
    bool flat = items.size() <= 8;
    for (const V& i : items) {
      t.depth = std::max(t.depth, i.depth + 1);
      flat = flat && i.kind != V::kOther && i.kind != V::kTuple;
    }
    if (items.empty()) t.depth = 1;
    if (flat) t.items = std::move(items);
    else t.kind = V::kOther;
    return t;
  };
  auto raiseTop = [&](long inner) {  // the top container now holds a value `inner` deep
    if (stack.empty()) return;
    stack.back().depth = std::max(stack.back().depth, inner + 1);
    note(stack.back().depth);
  };
  // ('storage', torch.<T>Storage, key, location, numel): what BINPERSID resolves.
  auto persistentId = [&](const V& id) {
    if (id.kind != V::kTuple || id.items.size() != 5 || id.items[0].s != "storage" ||
        id.items[1].kind != V::kGlobal || id.items[2].kind != V::kStr || id.items[4].kind != V::kInt)
      return;
    out.storages.push_back({id.items[2].s, id.items[1].s, id.items[4].n});
  };
  for (size_t at = 0; at < p.size();) {
    const uint8_t op = static_cast<uint8_t>(p[at]);
    const size_t rest = p.size() - at - 1;
    size_t operand = 0;
    auto counted = [&](int width) {
      return rest < static_cast<size_t>(width) ? rest + 1 : width + size_t{littleEndian(p, at + 1, width)};
    };
    auto intOperand = [&](int width) {
      V v{0, V::kInt};
      if (rest >= static_cast<size_t>(width)) {
        uint32_t u = littleEndian(p, at + 1, width);
        v.n = width == 4 ? static_cast<int32_t>(u) : static_cast<int64_t>(u);
      }
      return v;
    };
    switch (op) {
      case 0x80: operand = 1; break;                                   // PROTO
      case 'K': case 'M': case 'J':                                    // BININT1/2, BININT
        operand = op == 'K' ? 1 : op == 'M' ? 2 : 4;
        push(intOperand(static_cast<int>(operand)));
        break;
      case 'G': operand = 8; pushDepth(0); break;                      // BINFLOAT
      case 'N': case 0x88: case 0x89: pushDepth(0); break;             // None, True, False
      case 0x8a: {                                                     // LONG1
        operand = counted(1);
        V v{0, V::kInt};
        const size_t len = operand - 1;
        if (operand <= rest && len >= 1 && len <= 8) {
          uint64_t u = 0;
          for (size_t i = len; i-- > 0;) u = (u << 8) | static_cast<uint8_t>(p[at + 2 + i]);
          if (len < 8 && (u >> (8 * len - 1)) & 1) u |= ~uint64_t{0} << (8 * len);  // sign-extend
          v.n = static_cast<int64_t>(u);
        } else {
          v.kind = V::kOther;
        }
        push(std::move(v));
        break;
      }
      case 'X': case 0x8c: {                                           // BINUNICODE, SHORT_BINUNICODE
        operand = counted(op == 'X' ? 4 : 1);
        V v{0, V::kStr};
        const size_t header = op == 'X' ? 4 : 1;
        if (operand <= rest) v.s = std::string(p.substr(at + 1 + header, operand - header));
        push(std::move(v));
        break;
      }
      case 'B': case 'T': operand = counted(4); pushDepth(0); break;   // BINBYTES, BINSTRING
      case 'C': case 'U': operand = counted(1); pushDepth(0); break;   // SHORT_BINBYTES/STRING
      case 'c': {                                                      // GLOBAL module\nname\n
        size_t nl1 = p.find('\n', at + 1);
        size_t nl2 = nl1 == std::string_view::npos ? nl1 : p.find('\n', nl1 + 1);
        if (nl2 == std::string_view::npos) return out;
        operand = nl2 - at;
        V v{0, V::kGlobal};
        v.s = std::string(p.substr(at + 1, nl1 - at - 1)) + "." + std::string(p.substr(nl1 + 1, nl2 - nl1 - 1));
        push(std::move(v));
        break;
      }
      case '}': case ']': pushDepth(1); break;                         // EMPTY_DICT, EMPTY_LIST
      case ')': push(tupleOf({})); break;                              // EMPTY_TUPLE
      case '(': stack.push_back(V{-1}); break;                         // MARK
      case 't': push(tupleOf(popToMark())); break;                     // TUPLE
      case 'l': {                                                      // LIST
        long d = 0;
        for (const V& i : popToMark()) d = std::max(d, i.depth);
        pushDepth(d + 1);
        break;
      }
      case 0x85: case 0x86: case 0x87: {                               // TUPLE1..3
        std::vector<V> items;
        for (int i = 0; i < op - 0x84; ++i) items.push_back(pop());
        std::reverse(items.begin(), items.end());
        push(tupleOf(std::move(items)));
        break;
      }
      case 'a': raiseTop(pop().depth); break;                          // APPEND
      case 's': { long v = pop().depth, k = pop().depth; raiseTop(std::max(k, v)); break; }
      case 'e': case 'u': {                                            // APPENDS, SETITEMS
        long d = 0;
        for (const V& i : popToMark()) d = std::max(d, i.depth);
        raiseTop(d);
        break;
      }
      case 'R': { long args = pop().depth; pop(); pushDepth(args + 1); break; }  // REDUCE
      case 0x81: { long args = pop().depth; pop(); pushDepth(args + 1); break; } // NEWOBJ
      case 'b': raiseTop(pop().depth); break;                          // BUILD
      case 'Q': persistentId(pop()); pushDepth(0); break;              // BINPERSID
      case '0': pop(); break;                                          // POP
      case '1': popToMark(); break;                                    // POP_MARK
      case '2': push(stack.empty() || stack.back().depth < 0 ? V{} : stack.back()); break;  // DUP
      case 'q': case 'r': {                                            // BINPUT, LONG_BINPUT
        operand = op == 'q' ? 1 : 4;
        if (rest < operand) break;
        const uint32_t key = littleEndian(p, at + 1, static_cast<int>(operand));
        // Picklers number memo entries from 0, one per BINPUT of at least 2 bytes; torch's
        // Unpickler sizes its memo table to the key (16 bytes an entry: 2^31 -> 32 GB).
        if (key > p.size()) {
          out.damage = "memo index " + std::to_string(key) + " is beyond any this pickle can hold";
          out.damage_at = at;
          return out;
        }
        if (!stack.empty() && stack.back().depth >= 0) memo[key] = stack.back();
        break;
      }
      case 'h': case 'j': {                                            // BINGET, LONG_BINGET
        operand = op == 'h' ? 1 : 4;
        auto it = rest >= operand ? memo.find(littleEndian(p, at + 1, static_cast<int>(operand))) : memo.end();
        push(it == memo.end() ? V{} : it->second);
        break;
      }
      case '.': out.complete = true; return out;                       // STOP
      default:
        out.unknown_opcode = op;
        out.unknown_at = at;
        return out;
    }
    if (operand > rest) {  // torch's Unpickler would allocate what the operand claims first
      out.damage = "an operand runs past the end of the pickle";
      out.damage_at = at;
      return out;
    }
    at += 1 + operand;
  }
  return out;
}

size_t pickleNestingDepth(std::string_view pickle) { return scanPickle(pickle).depth; }

namespace {

size_t storageItemSize(const std::string& global) {
  static const std::unordered_map<std::string, size_t> sizes = {
      {"torch.FloatStorage", 4},     {"torch.DoubleStorage", 8},       {"torch.HalfStorage", 2},
      {"torch.BFloat16Storage", 2},  {"torch.LongStorage", 8},         {"torch.IntStorage", 4},
      {"torch.ShortStorage", 2},     {"torch.CharStorage", 1},         {"torch.ByteStorage", 1},
      {"torch.BoolStorage", 1},      {"torch.ComplexFloatStorage", 8}, {"torch.ComplexDoubleStorage", 16},
      {"torch.QInt8Storage", 1},     {"torch.QUInt8Storage", 1},       {"torch.QInt32Storage", 4},
      {"torch.QUInt4x2Storage", 1},  {"torch.QUInt2x4Storage", 1},     {"torch.UntypedStorage", 1},
  };
  auto it = sizes.find(global);
  return it == sizes.end() ? 0 : it->second;
}

void checkArchiveRecords(caffe2::serialize::PyTorchStreamReader& reader, const std::string& file, bool is_model,
                         size_t archive_size) {
  const bool known_opcodes_only = is_model;
  auto corrupt = [&](const std::string& what) { return fileError(file, is_model, "corrupt archive: " + what); };
  std::vector<std::string> records;
  try {
    records = reader.getAllRecords();
  } catch (const std::exception&) {
    return;  // a damaged central directory: torch's reader says why when it loads
  }
  // Deflate expands at most ~1032:1, so a record claiming more than that over the whole
  // archive has a damaged header; torch would allocate what it claims (tens of GB) first.
  const __int128 max_record = static_cast<__int128>(archive_size) * 1032 + 4096;
  for (const std::string& name : records) {
    size_t claimed = 0;
    try {
      claimed = reader.getRecordSize(name);
    } catch (const std::exception&) {
      continue;  // unreadable header: torch's reader says why
    }
    if (static_cast<__int128>(claimed) > max_record)
      throw corrupt("record '" + name + "' claims " + std::to_string(claimed) + " bytes in a " +
                    std::to_string(archive_size) + "-byte archive");
    if (!endsWith(name, ".pkl") && !endsWith(name, ".debug_pkl")) continue;
    PickleScan scan;
    try {
      auto [data, size] = reader.getRecord(name);
      scan = scanPickle(std::string_view(static_cast<const char*>(data.get()), size));
    } catch (const std::exception&) {
      continue;  // an unreadable record (bad CRC, ...): torch's reader says why
    }
    if (scan.depth > kMaxPickleNesting)
      throw corrupt("record '" + name + "' nests values " + std::to_string(scan.depth) + " levels deep (at most " +
                    std::to_string(kMaxPickleNesting) + " supported)");
    if (!scan.damage.empty())
      throw corrupt("record '" + name + "' is damaged at byte " + std::to_string(scan.damage_at) + ": " + scan.damage);
    // torch's importer unpickles .debug_pkl lazily, inside an exception's noexcept
    // what(): an opcode it does not know there is std::terminate, not an error.
    if (known_opcodes_only && scan.unknown_opcode) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", *scan.unknown_opcode);
      throw corrupt("record '" + name + "' has a pickle opcode TorchScript does not write (" + hex + " at byte " +
                    std::to_string(scan.unknown_at) + ")");
    }
    // Storages are records next to the pickle: data.pkl -> data/<key>,
    // constants.pkl -> constants/<key>. torch sizes a storage from the pickle's numel,
    // not from its record, so a short record would be read past its end. Only these two
    // are loaded: torch.jit.save itself writes traced_inputs/<key> records empty.
    if (name != "data.pkl" && name != "constants.pkl") continue;
    const std::string dir = name.substr(0, name.rfind('.'));
    for (const PickleScan::Storage& st : scan.storages) {
      const size_t item = storageItemSize(st.type);
      const std::string record = dir + "/" + st.key;
      if (st.numel < 0) throw corrupt("storage '" + record + "' has a negative size");
      if (item == 0 || st.numel == 0) continue;  // unknown type: torch refuses it itself
      size_t have = 0;
      try {
        if (!reader.hasRecord(record)) throw corrupt("storage record '" + record + "' is missing");
        have = reader.getRecordSize(record);  // the zip header's size: no read
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {
        throw corrupt("storage record '" + record + "' cannot be read: " + describeException(e));
      }
      const __int128 need = static_cast<__int128>(st.numel) * item;
      if (static_cast<__int128>(have) < need)
        throw corrupt("storage record '" + record + "' holds " + std::to_string(have) + " bytes, its pickle says " +
                      std::to_string(st.numel) + " x " + std::to_string(item));
    }
  }
}

}  // namespace

void checkArchivePickles(const std::string& path) {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const std::exception&) {
    return;  // not a readable zip: torch::jit::load says why
  }
  checkArchiveRecords(*reader, path, /*is_model=*/true, fileSize(path));
}

void checkSavedArchive(caffe2::serialize::PyTorchStreamReader& reader, const std::string& file) {
  // Python's pickler (torch.save) writes opcodes TorchScript's never does; the reader
  // refuses the ones it lacks itself, outside any noexcept.
  checkArchiveRecords(reader, file, /*is_model=*/false, fileSize(file));
}

void checkTensorsFitStorage(const c10::IValue& value, const std::string& file, const std::string& what) {
  TensorWalker(file, /*is_model=*/false).visit(value, what);
}

void checkLoadedTensors(const jit::Module& module, const std::string& model) {
  TensorWalker walker(model, /*is_model=*/true);
  walker.visit(module._ivalue(), "");
  for (jit::Function* f : module._ivalue()->compilation_unit()->get_functions()) {
    if (jit::GraphFunction* gf = jit::tryToGraphFunction(*f))
      walker.visitBlock(gf->graph()->block(), f->qualname().qualifiedName());
  }
}

}  // namespace brisk
