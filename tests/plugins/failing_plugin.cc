// A plug-in whose registration fails (it registers a backend under a name that is taken):
// the error must reach the user, naming the file.
#include <memory>

#include "collage/sdk/backend.h"

namespace {

class DuplicateNative : public collage::Backend {
 public:
  std::string name() const override { return "native"; }
  std::string version() const override { return "0"; }
  const collage::RuleSet& rules() const override { return rules_; }

 private:
  collage::RuleSet rules_;
};

collage::Status RegisterDuplicate(collage::BackendRegistry& registry) {
  return registry.Register(std::make_unique<DuplicateNative>());
}

}  // namespace

COLLAGE_PLUGIN(RegisterDuplicate)
