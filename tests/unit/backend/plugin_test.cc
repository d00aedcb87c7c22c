// Backend plug-ins: the example plug-in loads, registers and runs; broken ones are refused
// with a message naming the file and the reason.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend_test_util.h"
#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "session/session_access.h"
#include "test_paths.h"

namespace collage {
namespace {

using testing::NodeOf;

void LoadExamplePlugin() {
  BackendRegistry& registry = GlobalBackendRegistry();
  if (registry.Find("plugin_example") != nullptr) return;
  Status status = registry.LoadPluginsFrom(COLLAGE_PLUGIN_DIR);
  ASSERT_TRUE(status.ok()) << status.ToString();
}

// x → Relu → Clip(0, 6) → Sigmoid: the plug-in takes Relu and Clip, native the Sigmoid.
Graph ActivationGraph() {
  Graph g;
  TensorType t{DType::kFloat32, {2, 3, 5}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  ValueId r = g.AddValue("r", t);
  ValueId c = g.AddValue("c", t);
  ValueId y = g.AddValue("y", t);
  ValueId lo = g.AddConstant("lo", Tensor::Scalar<float>(0.0f));
  ValueId hi = g.AddConstant("hi", Tensor::Scalar<float>(0.5f));
  EXPECT_TRUE(g.AddNode(NodeOf("relu", "Relu", {x}, {r})).ok());
  EXPECT_TRUE(g.AddNode(NodeOf("clip", "Clip", {r, lo, hi}, {c})).ok());
  EXPECT_TRUE(g.AddNode(NodeOf("sigmoid", "Sigmoid", {c}, {y})).ok());
  g.AddOutput(y);
  return g;
}

TEST(PluginTest, ExamplePluginLoadsRegistersAndRuns) {
  LoadExamplePlugin();
  const Backend* plugin = GlobalBackendRegistry().Find("plugin_example");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->rules().size(), 3u);

  SessionOptions on_plugin;
  on_plugin.backend = "plugin_example";
  auto session = SessionAccess::FromGraph(ActivationGraph(), on_plugin);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_NE((*session)->DescribePlacement().find("plugin_example: 2 nodes"), std::string::npos)
      << (*session)->DescribePlacement();
  auto reference = SessionAccess::FromGraph(ActivationGraph());
  ASSERT_TRUE(reference.ok());

  std::vector<float> x(30);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.1f - 1.5f;
  std::map<std::string, Tensor> inputs{{"x", Tensor::FromVector<float>({2, 3, 5}, x)}};
  auto got = (*session)->Run(inputs);
  auto want = (*reference)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(got->at("y").ToVector<float>(), want->at("y").ToVector<float>());
}

TEST(PluginTest, MissingFolderIsRefused) {
  BackendRegistry registry;
  Status status = registry.LoadPluginsFrom("/nonexistent/plugins");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("/nonexistent/plugins"), std::string::npos);
}

TEST(PluginTest, MissingFileIsRefused) {
  BackendRegistry registry;
  Status status = registry.LoadPlugin("/nonexistent/libnothing.so");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("libnothing.so"), std::string::npos);
}

TEST(PluginTest, WrongAbiVersionIsRefused) {
  BackendRegistry registry;
  Status status = registry.LoadPluginsFrom(COLLAGE_TEST_PLUGIN_DIR "/wrong_abi");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("ABI version"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("libwrong_abi_plugin.so"), std::string::npos);
  EXPECT_TRUE(registry.backends().empty());
}

TEST(PluginTest, LibraryWithoutEntryPointsIsRefused) {
  BackendRegistry registry;
  Status status = registry.LoadPluginsFrom(COLLAGE_TEST_PLUGIN_DIR "/no_entry");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("collage_plugin_register"), std::string::npos) << status.message();
}

// Only its name matters to the registry.
class NamedBackend : public Backend {
 public:
  explicit NamedBackend(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  std::string name_;
  RuleSet rules_;
};

TEST(PluginTest, EntryPointsExportedAsDataAreRefusedBeforeTheLibraryRuns) {
  BackendRegistry registry;
  Status status = registry.LoadPluginsFrom(COLLAGE_TEST_PLUGIN_DIR "/data_entry");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("as data"), std::string::npos) << status.message();
  EXPECT_EQ(std::getenv("COLLAGE_DATA_ENTRY_PLUGIN_RAN"), nullptr)
      << "the library's constructor ran before its entry points were checked";
  EXPECT_TRUE(registry.backends().empty());
}

TEST(PluginTest, FailedRegistrationReportsTheFile) {
  BackendRegistry registry;
  // The failing plug-in registers a second "native": take the name first.
  ASSERT_TRUE(registry.Register(std::make_unique<NamedBackend>("native")).ok());
  Status status = registry.LoadPluginsFrom(COLLAGE_TEST_PLUGIN_DIR "/failing");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("libfailing_plugin.so"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("already registered"), std::string::npos) << status.message();
  EXPECT_EQ(registry.backends().size(), 1u);
}

TEST(PluginTest, TheSameFolderNamedTwiceLoadsItsPluginsOnce) {
  BackendRegistry registry;
  ASSERT_TRUE(registry.LoadPluginsFrom(COLLAGE_PLUGIN_DIR).ok());
  const size_t backends = registry.backends().size();
  // Through another spelling of the same folder, as COLLAGE_BACKEND_PATH and --backend-path
  // may name it.
  Status again = registry.LoadPluginsFrom(COLLAGE_PLUGIN_DIR "/.");
  EXPECT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(registry.backends().size(), backends);
  EXPECT_EQ(registry.plugin_paths().size(), 1u);
}

// A scratch folder with a copy of the example plug-in (or anything else) in it.
class PluginFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("collage_plugin_folder_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(PluginFolderTest, AFifoNamedLikeAPluginIsRefusedWithoutWaiting) {
  ASSERT_EQ(::mkfifo(Path("libblocking.so").c_str(), 0600), 0);
  BackendRegistry registry;
  Status status = registry.LoadPluginsFrom(dir_.string());  // would block in dlopen
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("a FIFO"), std::string::npos) << status.message();
}

TEST_F(PluginFolderTest, AFolderNamedLikeAPluginIsRefused) {
  std::filesystem::create_directory(Path("libfolder.so"));
  BackendRegistry registry;
  Status status = registry.LoadPluginsFrom(dir_.string());
  EXPECT_NE(status.message().find("a folder"), std::string::npos) << status.message();
}

TEST_F(PluginFolderTest, AWorldWritableFolderOrPluginIsRefused) {
  std::filesystem::copy_file(COLLAGE_PLUGIN_DIR "/libcollage_plugin_example.so",
                             Path("libplugin_example.so"));
  std::filesystem::permissions(dir_, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  BackendRegistry registry;
  Status folder = registry.LoadPluginsFrom(dir_.string());
  EXPECT_FALSE(folder.ok());
  EXPECT_NE(folder.message().find("writable by every user"), std::string::npos) << folder.message();
  std::filesystem::permissions(dir_, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::remove);
  std::filesystem::permissions(Path("libplugin_example.so"), std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  Status file = registry.LoadPlugin(Path("libplugin_example.so"));
  EXPECT_NE(file.message().find("writable by every user"), std::string::npos) << file.message();
  EXPECT_TRUE(registry.backends().empty());
}

TEST_F(PluginFolderTest, AFileThatIsNoLibraryIsRefusedByName) {
  { std::ofstream(Path("libtext.so")) << "not a library"; }
  BackendRegistry registry;
  Status status = registry.LoadPlugin(Path("libtext.so"));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("no ELF header"), std::string::npos) << status.message();
}

TEST(BackendRegistryTest, RefusesDuplicateAndMalformedNames) {
  BackendRegistry registry;
  EXPECT_TRUE(registry.Register(std::make_unique<NamedBackend>("mine")).ok());
  EXPECT_EQ(registry.Register(std::make_unique<NamedBackend>("mine")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(registry.Register(std::make_unique<NamedBackend>("a:b")).ok());
  EXPECT_FALSE(registry.Register(std::make_unique<NamedBackend>("")).ok());
  EXPECT_FALSE(registry.Register(nullptr).ok());
  ASSERT_EQ(registry.backends().size(), 1u);
  EXPECT_EQ(registry.Find("mine"), registry.backends()[0]);
  EXPECT_EQ(registry.Find("other"), nullptr);
}

TEST(BackendRegistryTest, BuiltInsAreRegisteredNativeFirst) {
  std::vector<const Backend*> backends = GlobalBackendRegistry().backends();
  ASSERT_FALSE(backends.empty());
  EXPECT_EQ(backends.front()->name(), "native");
  for (const Backend* backend : backends) {
    EXPECT_FALSE(backend->version().empty()) << backend->name();
    EXPECT_GT(backend->rules().size(), 0u) << backend->name();
  }
}

}  // namespace
}  // namespace collage
