#include "core/executor/step_call.h"

#include "core/common/error.h"
#include "core/graph/graph.h"

namespace brisk {

void rethrowNamingStep(const Step& step) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.namesNode()) throw;
    throw e.withNode(step.node->describe(), step.node->key());
  } catch (const std::exception& e) {
    throw Error(Error::Where{"", step.node->describe(), step.node->key()}, describeException(e));
  }
}

}  // namespace brisk
