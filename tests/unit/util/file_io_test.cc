#include "util/file_io.h"

#include "file_size_limit.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace collage {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collage-file-io-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }
  static std::string Contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Names in the folder: a failed write must leave no temporary file behind.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

TEST_F(FileIoTest, ReadsRegularFilesAndRefusesEverythingElseWithoutBlocking) {
  auto bytes = ReadRegularFile(Write("a.bin", "hello"));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, "hello");

  auto missing = ReadRegularFile(Path("missing"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  // A FIFO with no writer would block a plain open() forever.
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  auto fifo = ReadRegularFile(Path("fifo"));
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("a FIFO, not a regular file"), std::string::npos)
      << fifo.status().message();

  // /dev/zero never ends: refused before a byte is read.
  auto zero = ReadRegularFile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("/dev/zero"), std::string::npos);
  EXPECT_NE(zero.status().message().find("character device"), std::string::npos);

  auto folder = ReadRegularFile(dir_.string());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("a directory"), std::string::npos);

  auto too_large = ReadRegularFile(Path("a.bin"), 4, "test files are small");
  ASSERT_FALSE(too_large.ok());
  EXPECT_NE(too_large.status().message().find("test files are small"), std::string::npos);

  EXPECT_EQ(*RegularFileSize(Path("a.bin")), 5);
  EXPECT_FALSE(RegularFileSize(Path("fifo")).ok());
}

TEST_F(FileIoTest, ConfinedFilesRefuseSymlinksAtEveryStep) {
  fs::create_directories(dir_ / "model" / "weights");
  Write("model/weights/w.bin", "0123456789");
  Write("secret", "the secret");
  const std::string model = Path("model");

  auto inside = ConfinedFile::Open(model, "weights/w.bin");
  ASSERT_TRUE(inside.ok()) << inside.status().ToString();
  EXPECT_EQ(inside->size(), 10);
  char part[4] = {};
  ASSERT_TRUE(inside->ReadRange(3, 4, part).ok());
  EXPECT_EQ(std::string(part, 4), "3456");
  EXPECT_FALSE(inside->ReadRange(8, 4, part).ok());  // past the end
  EXPECT_FALSE(inside->ReadRange(-1, 2, part).ok());

  // The file itself a symlink to a file outside the model's folder.
  fs::create_symlink(Path("secret"), dir_ / "model" / "link.bin");
  auto link = ConfinedFile::Open(model, "link.bin");
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.status().message().find("is a symlink"), std::string::npos)
      << link.status().message();

  // Even a symlink that stays inside the folder: what it points to can change.
  fs::create_symlink("weights/w.bin", dir_ / "model" / "inner.bin");
  EXPECT_FALSE(ConfinedFile::Open(model, "inner.bin").ok());

  // A folder on the way a symlink.
  fs::create_directory_symlink(dir_, dir_ / "model" / "up");
  auto through = ConfinedFile::Open(model, "up/secret");
  ASSERT_FALSE(through.ok());
  EXPECT_NE(through.status().message().find("is a symlink"), std::string::npos);

  EXPECT_FALSE(ConfinedFile::Open(model, "../secret").ok());
  EXPECT_FALSE(ConfinedFile::Open(model, "weights/../../secret").ok());
  EXPECT_FALSE(ConfinedFile::Open(model, Path("secret")).ok());  // absolute
  EXPECT_FALSE(ConfinedFile::Open(model, "weights").ok());       // a folder
  EXPECT_EQ(ConfinedFile::Open(model, "none.bin").status().code(), StatusCode::kNotFound);

  ASSERT_EQ(::mkfifo(Path("model/fifo.bin").c_str(), 0600), 0);
  auto fifo = ConfinedFile::Open(model, "fifo.bin");
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("FIFO"), std::string::npos);
}

TEST_F(FileIoTest, AtomicWritesReplaceOnlyRegularFiles) {
  // New file: the mode the umask allows.
  const mode_t old_umask = ::umask(022);
  ASSERT_TRUE(WriteFileAtomically(Path("new.txt"), "one").ok());
  ::umask(old_umask);
  EXPECT_EQ(Contents(Path("new.txt")), "one");
  struct stat st {};
  ASSERT_EQ(::stat(Path("new.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  // Replaced file: keeps its mode.
  ASSERT_EQ(::chmod(Path("new.txt").c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("new.txt"), "two").ok());
  EXPECT_EQ(Contents(Path("new.txt")), "two");
  ASSERT_EQ(::stat(Path("new.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // A symlink is written through: the link stays, its target gets the bytes.
  fs::create_directories(dir_ / "elsewhere");
  Write("elsewhere/target.txt", "old");
  fs::create_symlink(dir_ / "elsewhere" / "target.txt", dir_ / "link.txt");
  ASSERT_TRUE(WriteFileAtomically(Path("link.txt"), "through").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.txt"));
  EXPECT_EQ(Contents(Path("elsewhere/target.txt")), "through");

  // A link someone else planted (as in a shared, sticky folder) is not followed: the file it
  // points to keeps its bytes.
  if (::geteuid() == 0) {
    Write("elsewhere/victim.txt", "precious");
    fs::create_symlink(dir_ / "elsewhere" / "victim.txt", dir_ / "planted.npy");
    ASSERT_EQ(::lchown(Path("planted.npy").c_str(), 65534, 65534), 0);
    auto planted = WriteFileAtomically(Path("planted.npy"), "npy bytes");
    ASSERT_FALSE(planted.ok());
    EXPECT_NE(planted.message().find("belongs to another user"), std::string::npos)
        << planted.message();
    EXPECT_EQ(Contents(Path("elsewhere/victim.txt")), "precious");
    EXPECT_TRUE(fs::is_symlink(dir_ / "planted.npy"));
    fs::remove(dir_ / "planted.npy");
  }

  fs::create_symlink(dir_ / "nowhere" / "x", dir_ / "dangling.txt");
  auto dangling = WriteFileAtomically(Path("dangling.txt"), "x");
  EXPECT_FALSE(dangling.ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling.txt"));

  // A FIFO, a folder and a device are refused and stay what they were.
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  auto fifo = WriteFileAtomically(Path("fifo"), "x");
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.message().find("a FIFO"), std::string::npos) << fifo.message();
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
  fs::create_directories(dir_ / "folder");
  EXPECT_FALSE(WriteFileAtomically(Path("folder"), "x").ok());
  EXPECT_TRUE(fs::is_directory(dir_ / "folder"));
  auto device = WriteFileAtomically("/dev/null", "x");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.message().find("character device"), std::string::npos);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  EXPECT_EQ(Entries(), (std::vector<std::string>{"dangling.txt", "elsewhere", "fifo", "folder",
                                                 "link.txt", "new.txt"}));
}

TEST_F(FileIoTest, AFailedWriteKeepsTheOldFileAndLeavesNothingBehind) {
  Write("plan.json", "the old plan");
  // A file-size limit makes the write fail part-way, as a full disk does.
  Status written;
  {
    testing::ScopedFileSizeLimit limit(1024);
    ASSERT_TRUE(limit.ok());
    written = WriteFileAtomically(Path("plan.json"), std::string(64 * 1024, 'x'));
  }

  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find("plan.json"), std::string::npos) << written.message();
  EXPECT_EQ(Contents(Path("plan.json")), "the old plan");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"plan.json"}));

  // Into a folder that does not exist: nothing to clean, a clear error.
  EXPECT_EQ(WriteFileAtomically(Path("no/such/folder/x"), "x").code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace collage
