#include "core/memory/output_arena.h"

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
#include <c10/core/StorageImpl.h>

#include <algorithm>
#include <atomic>

#include "core/memory/capture_allocator.h"
#include "core/plan/execution_plan.h"
#include "core/graph/graph.h"

namespace brisk {

struct OutputArena::Block {
  std::atomic<int64_t> refs{1};  // the arena's own reference + one per storage placed in it
  c10::DataPtr mem;
};

namespace {

void unref(void* ctx) {
  auto* b = static_cast<OutputArena::Block*>(ctx);
  if (b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete b;
}

size_t useCount(c10::intrusive_ptr_target* p) { return c10::raw::intrusive_ptr::use_count(p); }

c10::StorageImpl* storageOf(const at::Tensor& t) {
  return t.has_storage() ? t.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl() : nullptr;
}

// Only the arena refers to `t` (no other tensor handle, no view of its storage).
bool released(const at::Tensor& t) {
  c10::StorageImpl* s = storageOf(t);
  return useCount(t.unsafeGetTensorImpl()) == 1 && (!s || useCount(s) == 1);
}

}  // namespace

OutputArena::OutputArena(const ExecutionPlan& plan) {
  const ExecBlock& top = plan.blocks.front();
  auto managed = [this](uint32_t slot) {
    return std::any_of(outputs_.begin(), outputs_.end(), [slot](const Output& o) { return o.slot == slot; });
  };
  for (const Step& st : top.steps) {
    // Only a kernel that writes into the tensor it is given can write into the arena.
    if (st.kernel->outputs() != OutputContract::kReused) continue;
    const c10::FunctionSchema* schema = st.node->schema();
    for (uint32_t i = 0; i < st.num_out; ++i) {
      const uint32_t slot = plan.indices[st.out_begin + i];
      if (std::find(top.returns.begin(), top.returns.end(), slot) == top.returns.end()) continue;
      if (managed(slot)) continue;
      if (st.node->output(i)->type()->kind() != c10::TypeKind::TensorType) continue;
      // An output the schema says may alias an input is not a fresh buffer.
      if (schema && i < schema->returns().size() && schema->returns()[i].alias_info()) continue;
      outputs_.push_back(Output{slot});
    }
  }
}

OutputArena::~OutputArena() {
  for (Output& o : outputs_) o.held = at::Tensor();
  if (block_) unref(block_);
}

void OutputArena::newBlock() {
  if (block_) unref(block_);  // lives on while tensors of the caller point into it
  block_ = new Block();
  block_->mem = allocateSlabMemory(std::max<size_t>(total_, 1));
}

void OutputArena::layout() {
  constexpr size_t kAlign = 64;
  total_ = 0;
  for (Output& o : outputs_) {
    if (!o.active) continue;
    o.offset = total_;
    total_ += (o.bytes + kAlign - 1) / kAlign * kAlign;
  }
  for (Output& o : outputs_) o.held = at::Tensor();
  newBlock();
  relayout_ = false;
}

void OutputArena::prepare(c10::IValue* slots) {
  for (Output& o : outputs_) o.given = nullptr;
  if (!sized_ || outputs_.empty()) return;
  bool reuse = false;
  if (relayout_) {
    layout();
  } else {
    reuse = std::all_of(outputs_.begin(), outputs_.end(),
                        [](const Output& o) { return !o.held.defined() || released(o.held); });
    if (reuse) {
      ++reuses_;
    } else {
      // The caller still holds a result of the previous run: never write over it.
      for (Output& o : outputs_) o.held = at::Tensor();
      if (block_->refs.load(std::memory_order_acquire) > 1) {
        ++second_blocks_;
        newBlock();
      }
    }
  }
  char* base = static_cast<char*>(block_->mem.get());
  for (Output& o : outputs_) {
    if (!o.active) continue;
    at::Tensor t;
    if (reuse && o.held.defined() && o.held.data_ptr() != nullptr && storageOf(o.held)->data() == base + o.offset) {
      t = std::move(o.held);  // the previous result, released: same place, no allocation
    } else {
      t = at::empty({0}, at::TensorOptions().dtype(o.dtype));
      c10::StorageImpl* s = storageOf(t);
      block_->refs.fetch_add(1, std::memory_order_relaxed);
      s->set_data_ptr_noswap(c10::DataPtr(base + o.offset, block_, &unref, c10::Device(c10::kCPU)));
      s->set_nbytes(o.bytes);
    }
    o.given = t.unsafeGetTensorImpl();
    slots[o.slot] = std::move(t);
  }
  for (Output& o : outputs_) o.held = at::Tensor();
}

void OutputArena::finish(c10::IValue* slots) {
  const char* base = block_ ? static_cast<const char*>(block_->mem.get()) : nullptr;
  for (Output& o : outputs_) {
    if (!o.active) continue;
    const c10::IValue& v = slots[o.slot];
    if (!v.isTensor() || (o.given && v.unsafeToTensorImpl() != o.given)) {
      if (o.given || !v.isTensor()) {
        // Its kernel stored another tensor than the one it was given: not arena-able.
        o.active = false;
        relayout_ = true;
      }
      continue;
    }
    const at::Tensor& t = v.toTensor();
    c10::StorageImpl* s = storageOf(t);
    if (!s) {
      o.active = false;
      relayout_ = true;
      continue;
    }
    if (!sized_) {
      o.dtype = t.scalar_type();
      o.bytes = s->nbytes();
      continue;
    }
    if (s->data() != base + o.offset || s->nbytes() > o.bytes) {
      o.bytes = std::max(o.bytes, s->nbytes());  // outgrew its place (reallocated)
      relayout_ = true;
      continue;
    }
    o.held = t;
  }
  if (!sized_) {
    sized_ = true;
    relayout_ = true;
  }
}

void OutputArena::addStats(MemoryStats& s) const {
  size_t active = 0;
  for (const Output& o : outputs_) active += o.active;
  s.output_arena_tensors += sized_ ? active : 0;
  s.output_arena_bytes += total_;
  s.output_arena_reuses += reuses_;
  s.output_arena_second_blocks += second_blocks_;
}

}  // namespace brisk
