#include "backend/c_plugin_backend.h"

#include <array>
#include <cstddef>

#include "backend/c_plugin_group.h"
#include "collage/sdk/errors.h"
#include "pattern/pattern_text.h"

namespace collage {
namespace {

// The smallest table of each version: a plug-in built against a later version of the header
// appends fields, never moves them.
constexpr size_t kTableSizeV1 = offsetof(CollageBackendTable, release) + sizeof(void (*)(void*));
// A plug-in's message buffer; the last byte is reset to NUL after every call, so that a message
// that filled the buffer is cut, not read past.
constexpr size_t kMessageBytes = 1024;

using MessageBuffer = std::array<char, kMessageBytes>;

std::string MessageOf(MessageBuffer& buffer) {
  buffer.back() = '\0';
  return buffer[0] == '\0' ? std::string("no reason given") : std::string(buffer.data());
}

class CPluginKernel : public Kernel {
 public:
  CPluginKernel(CollageKernel kernel, std::string where, size_t inputs, size_t outputs)
      : kernel_(kernel), where_(std::move(where)) {
    input_layouts_.assign(inputs, Layout::Plain());
    output_layouts_.assign(outputs, Layout::Plain());
  }
  CPluginKernel(const CPluginKernel&) = delete;
  CPluginKernel& operator=(const CPluginKernel&) = delete;
  ~CPluginKernel() override {
    if (kernel_.release != nullptr) kernel_.release(kernel_.state);
  }

  Status Run(const KernelBuffers& buffers) const override {
    MessageBuffer message{};
    if (kernel_.run(kernel_.state, buffers.inputs.data(), buffers.outputs.data(), message.data(),
                    message.size()) != 0) {
      return Internal("{}: run failed: {}", where_, MessageOf(message));
    }
    return Status();
  }

 private:
  CollageKernel kernel_;
  std::string where_;
};

class CPluginBackend : public Backend {
 public:
  CPluginBackend(const CollageBackendTable& table, std::string path)
      : table_(table), path_(std::move(path)) {}
  CPluginBackend(const CPluginBackend&) = delete;
  CPluginBackend& operator=(const CPluginBackend&) = delete;
  ~CPluginBackend() override {
    if (table_read_ && table_.release != nullptr) table_.release(table_.state);
  }

  // Reads the table's rules into rules(); refuses the table as MakeCPluginBackend says.
  Status ReadTable() {
    if (table_.version == 0 || table_.version > COLLAGE_C_API_VERSION) {
      return Refuse(fmt::format("it was built against version {} of collage's C plug-in interface, "
                                "this collage knows versions 1 to {}: rebuild it against this "
                                "collage's collage/plugin_c_api.h",
                                table_.version, COLLAGE_C_API_VERSION));
    }
    if (table_.size < kTableSizeV1) {
      return Refuse(fmt::format("its backend table has {} bytes, version {}'s has {}", table_.size,
                                table_.version, kTableSizeV1));
    }
    table_read_ = true;  // its fields are where this collage reads them, release included
    if (table_.name == nullptr || table_.version_string == nullptr) {
      return Refuse("a backend table has no name or no version_string");
    }
    name_ = table_.name;
    version_ = table_.version_string;
    if (table_.rule_count < 0 || (table_.rule_count > 0 && table_.rules == nullptr)) {
      return Refuse(fmt::format("backend '{}' declares {} rules but gives no array of them", name_,
                                table_.rule_count));
    }
    for (int32_t i = 0; i < table_.rule_count; ++i) {
      COLLAGE_RETURN_IF_ERROR(AddRule(table_.rules[i], i));
    }
    return Status();
  }

  std::string name() const override { return name_; }
  std::string version() const override { return version_; }
  const RuleSet& rules() const override { return rules_; }

 private:
  Status AddRule(const CollageRule& rule, int32_t index) {
    if (rule.name == nullptr || rule.name[0] == '\0' || rule.pattern == nullptr ||
        rule.compile == nullptr) {
      return Refuse(fmt::format("backend '{}': rule {} lacks a name, a pattern or a compile function",
                                name_, index));
    }
    const std::string rule_name = rule.name;
    auto pattern = ParsePatternText(rule.pattern);
    if (!pattern.ok()) {
      return Refuse(fmt::format("backend '{}', rule '{}': {}", name_, rule_name,
                                pattern.status().message()));
    }
    Rule added(rule_name, *std::move(pattern));
    void* state = table_.state;
    if (rule.accepts != nullptr) {
      added.Where([accepts = rule.accepts, state](const Match& match) {
        const CollageGroup group = GroupOf(match);
        return accepts(state, &CPluginHostApi(), &group) != 0;
      });
    }
    const std::string where = fmt::format("backend '{}' rule '{}' (plug-in '{}')", name_, rule_name, path_);
    added.Compiles([compile = rule.compile, state, where](
                       const CompileRequest& request,
                       const Match& match) -> StatusOr<std::unique_ptr<Kernel>> {
      const CollageGroup group = GroupOf(match, request);
      CollageKernel kernel{};
      MessageBuffer message{};
      if (compile(state, &CPluginHostApi(), &group, &kernel, message.data(), message.size()) != 0) {
        return InvalidArgument("{}: compile failed: {}", where, MessageOf(message));
      }
      if (kernel.run == nullptr) {
        if (kernel.release != nullptr) kernel.release(kernel.state);
        return Internal("{}: compile returned a kernel without a run function", where);
      }
      return std::unique_ptr<Kernel>(
          new CPluginKernel(kernel, where, request.inputs.size(), request.outputs.size()));
    });
    rules_.Add(std::move(added));
    return Status();
  }

  Status Refuse(const std::string& why) const {
    return InvalidArgument("backend plug-in '{}': {}", path_, why);
  }

  CollageBackendTable table_;
  bool table_read_ = false;
  std::string path_;
  std::string name_;
  std::string version_;
  RuleSet rules_;
};

}  // namespace

StatusOr<std::unique_ptr<Backend>> MakeCPluginBackend(const CollageBackendTable& table,
                                                      const std::string& path) {
  auto backend = std::make_unique<CPluginBackend>(table, path);
  COLLAGE_RETURN_IF_ERROR(backend->ReadTable());
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace collage
