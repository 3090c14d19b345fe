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
  for (const Step& st : top.steps) {
    if (st.kernel->kind() != KernelKind::kOutVariant) continue;
    const c10::FunctionSchema* schema = st.node->schema();
    for (uint32_t i = 0; i < st.num_out; ++i) {
      const uint32_t slot = plan.indices[st.out_begin + i];
      if (std::find(top.returns.begin(), top.returns.end(), slot) == top.returns.end()) continue;
      if (std::find(slot_.begin(), slot_.end(), slot) != slot_.end()) continue;
      if (st.node->output(i)->type()->kind() != c10::TypeKind::TensorType) continue;
      // An output the schema says may alias an input is not a fresh buffer.
      if (schema && i < schema->returns().size() && schema->returns()[i].alias_info()) continue;
      slot_.push_back(slot);
    }
  }
  const size_t n = slot_.size();
  dtype_.assign(n, c10::ScalarType::Undefined);
  bytes_.assign(n, 0);
  offset_.assign(n, 0);
  active_.assign(n, 1);
  held_.resize(n);
  given_.assign(n, nullptr);
}

OutputArena::~OutputArena() {
  held_.clear();
  if (block_) unref(block_);
}

void OutputArena::layout() {
  constexpr size_t kAlign = 64;
  total_ = 0;
  for (size_t i = 0; i < slot_.size(); ++i) {
    if (!active_[i]) continue;
    offset_[i] = total_;
    total_ += (bytes_[i] + kAlign - 1) / kAlign * kAlign;
  }
  for (at::Tensor& h : held_) h = at::Tensor();
  if (block_) unref(block_);  // lives on while tensors of the caller point into it
  block_ = new Block();
  block_->mem = allocateSlabMemory(std::max<size_t>(total_, 1));
  relayout_ = false;
}

void OutputArena::prepare(c10::IValue* slots) {
  ++runs_;
  std::fill(given_.begin(), given_.end(), nullptr);
  if (!sized_ || slot_.empty()) return;
  bool reuse = false;
  if (relayout_) {
    layout();
  } else {
    reuse = std::all_of(held_.begin(), held_.end(), [](const at::Tensor& t) { return !t.defined() || released(t); });
    if (reuse) {
      ++reuses_;
    } else {
      // The caller still holds a result of the previous run: never write over it.
      for (at::Tensor& h : held_) h = at::Tensor();
      if (block_->refs.load(std::memory_order_acquire) > 1) {
        ++second_blocks_;
        unref(block_);
        block_ = new Block();
        block_->mem = allocateSlabMemory(std::max<size_t>(total_, 1));
      }
    }
  }
  char* base = static_cast<char*>(block_->mem.get());
  for (size_t i = 0; i < slot_.size(); ++i) {
    if (!active_[i]) continue;
    at::Tensor t;
    if (reuse && held_[i].defined() && held_[i].data_ptr() != nullptr &&
        storageOf(held_[i])->data() == base + offset_[i]) {
      t = std::move(held_[i]);  // the previous result, released: same place, no allocation
    } else {
      t = at::empty({0}, at::TensorOptions().dtype(dtype_[i]));
      c10::StorageImpl* s = storageOf(t);
      block_->refs.fetch_add(1, std::memory_order_relaxed);
      s->set_data_ptr_noswap(c10::DataPtr(base + offset_[i], block_, &unref, c10::Device(c10::kCPU)));
      s->set_nbytes(bytes_[i]);
    }
    given_[i] = t.unsafeGetTensorImpl();
    slots[slot_[i]] = std::move(t);
  }
  for (at::Tensor& h : held_) h = at::Tensor();
}

void OutputArena::finish(c10::IValue* slots) {
  const char* base = block_ ? static_cast<const char*>(block_->mem.get()) : nullptr;
  for (size_t i = 0; i < slot_.size(); ++i) {
    if (!active_[i]) continue;
    const c10::IValue& v = slots[slot_[i]];
    if (!v.isTensor() || (given_[i] && v.unsafeToTensorImpl() != given_[i])) {
      if (given_[i] || !v.isTensor()) {
        // Its kernel stored another tensor than the one it was given: not arena-able.
        active_[i] = 0;
        relayout_ = true;
      }
      continue;
    }
    const at::Tensor& t = v.toTensor();
    c10::StorageImpl* s = storageOf(t);
    if (!s) {
      active_[i] = 0;
      relayout_ = true;
      continue;
    }
    if (!sized_) {
      dtype_[i] = t.scalar_type();
      bytes_[i] = s->nbytes();
      continue;
    }
    if (s->data() != base + offset_[i] || s->nbytes() > bytes_[i]) {
      bytes_[i] = std::max(bytes_[i], s->nbytes());  // outgrew its place (reallocated)
      relayout_ = true;
      continue;
    }
    held_[i] = t;
  }
  if (!sized_) {
    sized_ = true;
    relayout_ = true;
  }
}

void OutputArena::addStats(MemoryStats& s) const {
  size_t active = 0;
  for (uint8_t a : active_) active += a;
  s.output_arena_tensors += sized_ ? active : 0;
  s.output_arena_bytes += total_;
  s.output_arena_reuses += reuses_;
  s.output_arena_second_blocks += second_blocks_;
}

}  // namespace brisk
