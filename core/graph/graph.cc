#include "core/graph/graph.h"

#include <algorithm>
#include <sstream>

#include "core/common/error.h"

namespace brisk {

std::string Value::ref() const {
  return name_.empty() ? "%" + std::to_string(id_) : "%" + name_ + "_" + std::to_string(id_);
}

void Value::removeUse(const Use& u) {
  auto it = std::find(uses_.begin(), uses_.end(), u);
  if (it == uses_.end()) throw Error("graph edit: " + ref() + " has no record of the read being removed");
  *it = uses_.back();  // order is not kept
  uses_.pop_back();
}

Value*& Value::slotOf(const Use& u) { return u.user ? u.user->inputs_[u.index] : u.block->returns_[u.index]; }

void Value::moveUse(const Use& u, Value* to) {
  removeUse(u);
  slotOf(u) = to;
  to->uses_.push_back(u);
}

void Node::replaceInput(size_t i, Value* v) { inputs_.at(i)->moveUse({this, nullptr, static_cast<uint32_t>(i)}, v); }

Node* Node::enclosingNodeIn(const Block* b) {
  Node* n = this;
  while (n && n->block_ != b) n = n->block_ ? n->block_->owningNode() : nullptr;
  return n;
}

Block* Node::addBlock() {
  blocks_.push_back(std::unique_ptr<Block>(new Block(graph_, this)));
  return blocks_.back().get();
}

void Node::setSubgraph(std::unique_ptr<Graph> g) { subgraph_ = std::move(g); }

namespace {

std::string typeStr(const c10::TypePtr& t) { return t ? t->annotation_str() : "?"; }

std::string joinRefs(const std::vector<Value*>& vs) {
  std::string out;
  for (size_t i = 0; i < vs.size(); ++i) out += (i ? ", " : "") + vs[i]->ref();
  return out;
}

std::string constantStr(const c10::IValue& v) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    std::ostringstream os;
    os << "<Tensor " << t.sizes() << " " << t.scalar_type() << ">";
    return os.str();
  }
  std::ostringstream os;
  os << v;
  std::string s = os.str();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return oneLine(s);
}

void printBlock(std::ostringstream& os, const Block& b, int indent);

void printNode(std::ostringstream& os, const Node& n, int indent) {
  std::string pad(indent, ' ');
  os << pad;
  for (size_t i = 0; i < n.outputs().size(); ++i) {
    const Value* v = n.outputs()[i];
    os << (i ? ", " : "") << v->ref() << " : " << typeStr(v->type());
  }
  if (!n.outputs().empty()) os << " = ";
  os << n.key() << "(" << joinRefs(n.inputs()) << ")";
  os << "  # " << "#" << n.index() << "\n";
  for (size_t i = 0; i < n.blocks().size(); ++i) {
    const Block& b = *n.blocks()[i];
    os << pad << "  block" << i << "(";
    for (size_t j = 0; j < b.params().size(); ++j)
      os << (j ? ", " : "") << b.params()[j]->ref() << " : " << typeStr(b.params()[j]->type());
    os << "):\n";
    printBlock(os, b, indent + 4);
  }
  if (n.subgraph()) {
    os << pad << "  subgraph:\n";
    std::istringstream sub(n.subgraph()->str());
    for (std::string line; std::getline(sub, line);) os << pad << "    " << line << "\n";
  }
}

void printBlock(std::ostringstream& os, const Block& b, int indent) {
  for (const Node* n : b.nodes()) printNode(os, *n, indent);
  os << std::string(indent, ' ') << (b.owningNode() ? "-> (" : "return (") << joinRefs(b.returns())
     << ")\n";
}

}  // namespace

std::string Node::str() const {
  std::ostringstream os;
  for (size_t i = 0; i < outputs_.size(); ++i)
    os << (i ? ", " : "") << outputs_[i]->ref() << " : " << typeStr(outputs_[i]->type());
  if (!outputs_.empty()) os << " = ";
  os << key_ << "(" << joinRefs(inputs_) << ")";
  return os.str();
}

std::string Node::describe() const {
  std::string out = "#" + std::to_string(index_) + " " + kind_;
  if (!outputs_.empty()) out += " (" + joinRefs(outputs_) + ")";
  return out;
}

Value* Block::addParam(c10::TypePtr type, std::string name) {
  Value* v = graph_->newValue(std::move(type), std::move(name));
  v->block_ = this;
  params_.push_back(v);
  return v;
}

Node* Block::appendNode(NodeSpec spec) {
  Node* n = graph_->newNode();
  n->kind_ = std::move(spec.kind);
  n->key_ = spec.overload.empty() ? n->kind_ : n->kind_ + "." + spec.overload;
  n->schema_ = spec.schema;
  n->inputs_ = std::move(spec.inputs);
  for (size_t i = 0; i < n->inputs_.size(); ++i) n->inputs_[i]->uses_.push_back({n, nullptr, static_cast<uint32_t>(i)});
  n->frontend_ = std::move(spec.frontend);
  n->block_ = this;
  for (auto& [type, name] : spec.outputs) {
    Value* v = graph_->newValue(type, name);
    v->producer_ = n;
    v->block_ = this;
    n->outputs_.push_back(v);
  }
  nodes_.push_back(n);
  return n;
}

void Block::addReturn(Value* v) {
  v->uses_.push_back({nullptr, this, static_cast<uint32_t>(returns_.size())});
  returns_.push_back(v);
}

void Block::replaceReturn(size_t i, Value* v) { returns_.at(i)->moveUse({nullptr, this, static_cast<uint32_t>(i)}, v); }

Graph::Graph(std::string name) : name_(std::move(name)), top_(new Block(this, nullptr)) {}
Graph::~Graph() = default;

Value* Graph::newValue(c10::TypePtr type, std::string name) {
  values_.push_back(std::unique_ptr<Value>(
      new Value(static_cast<uint32_t>(values_.size()), std::move(type), std::move(name))));
  return values_.back().get();
}

Node* Graph::newNode() {
  nodes_.push_back(std::unique_ptr<Node>(new Node()));
  nodes_.back()->graph_ = this;
  return nodes_.back().get();
}

Value* Graph::addConstant(c10::IValue value, c10::TypePtr type) {
  Value* v = newValue(std::move(type), "");
  v->constant_ = std::make_unique<c10::IValue>(std::move(value));
  constants_.push_back(v);
  return v;
}

std::vector<Block*> Graph::allBlocks() const {
  std::vector<Block*> out{top_.get()};
  for (size_t i = 0; i < out.size(); ++i)
    for (Node* n : out[i]->nodes())
      for (const auto& b : n->blocks()) out.push_back(b.get());
  return out;
}

void Graph::finalize() {
  all_nodes_.clear();
  // Iterative pre-order walk so deeply nested graphs cannot overflow the stack.
  std::vector<std::pair<const Block*, size_t>> stack{{top_.get(), 0}};
  while (!stack.empty()) {
    auto& [block, pos] = stack.back();
    if (pos == block->nodes().size()) {
      stack.pop_back();
      continue;
    }
    Node* n = block->nodes()[pos++];
    n->index_ = static_cast<uint32_t>(all_nodes_.size());
    all_nodes_.push_back(n);
    for (auto it = n->blocks().rbegin(); it != n->blocks().rend(); ++it)
      stack.push_back({it->get(), 0});
  }
}

std::string Graph::str() const {
  std::ostringstream os;
  os << "graph " << name_ << "(";
  for (size_t i = 0; i < inputs().size(); ++i)
    os << (i ? ", " : "") << inputs()[i]->ref() << " : " << typeStr(inputs()[i]->type());
  os << "):\n";
  for (const Value* c : constants_)
    os << "  " << c->ref() << " : " << typeStr(c->type()) << " = constant(" << constantStr(c->constant())
       << ")\n";
  printBlock(os, *top_, 2);
  return os.str();
}

}  // namespace brisk
