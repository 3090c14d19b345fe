#include "core/frontend/tensor_bounds.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <unordered_set>

#include "core/frontend/file_error.h"

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

}  // namespace

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
