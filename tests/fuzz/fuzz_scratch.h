// A private scratch folder for the fuzzers of file readers: the readers take paths, so each
// input is written to a file in here first. It is made under the working directory (the
// .pb reader resolves external data relative to its file, which must stay in here), is
// unique per process (libFuzzer's -jobs/-fork run several at once), and is removed when the
// process exits normally; after a crash it is left behind with the files of the input.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

namespace collage::fuzz {

class ScratchDir {
 public:
  // The process's folder, created on first use.
  static ScratchDir& Get() {
    static ScratchDir* dir = new ScratchDir();  // never destroyed: atexit removes the folder
    return *dir;
  }

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  // Writes `size` bytes as the file `name` in the folder; aborts if that fails, since every
  // later check would be meaningless.
  std::string Write(const std::string& name, const void* data, size_t size) const {
    const std::string path = file(name);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
      std::fprintf(stderr, "fuzz scratch: cannot write %s\n", path.c_str());
      std::abort();
    }
    return path;
  }

  // Removes everything in the folder except the names in `keep`, so that no input sees files
  // an earlier one left and the disk does not fill up.
  void Clear(std::initializer_list<std::string_view> keep = {}) const {
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      const std::string name = entry.path().filename().string();
      bool kept = false;
      for (std::string_view k : keep) kept = kept || name == k;
      if (!kept) std::filesystem::remove_all(entry.path());
    }
  }

 private:
  ScratchDir() {
    std::string pattern = (std::filesystem::current_path() / "collage-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("fuzz scratch: mkdtemp");
      std::abort();
    }
    path_ = pattern;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(Get().path_, ec);
    });
  }

  std::filesystem::path path_;
};

}  // namespace collage::fuzz
