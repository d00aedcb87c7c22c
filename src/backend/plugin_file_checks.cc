#include "backend/plugin_file_checks.h"

#include <fcntl.h>
#include <link.h>  // ElfW: the ELF types of this machine's word size
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>

#include "collage/sdk/errors.h"

namespace collage {

namespace {

// Symbol tables of real plug-ins are kilobytes; this bounds what a hostile header can ask
// collage to read.
constexpr uint64_t kMaxTableBytes = uint64_t{64} << 20;

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Reads `bytes` at `offset`, all of it inside the file's `size`.
Status ReadAt(int fd, uint64_t size, uint64_t offset, uint64_t bytes, void* into,
              const std::string& path) {
  if (offset > size || bytes > size - offset) {
    return InvalidArgument("'{}' is not a valid shared library (a table lies past its end)", path);
  }
  auto* out = static_cast<char*>(into);
  while (bytes > 0) {
    const ssize_t got = pread(fd, out, bytes, static_cast<off_t>(offset));
    if (got <= 0) return IoError("cannot read '{}': {}", path, std::strerror(errno));
    out += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<uint64_t>(got);
  }
  return Status();
}

// The symbol type of each of `names` in the file's dynamic symbol table (defined symbols
// only); names not defined are absent from the result.
StatusOr<std::map<std::string, unsigned char>> DefinedDynamicSymbols(
    int fd, uint64_t size, const std::string& path, const std::vector<std::string>& names) {
  ElfW(Ehdr) header{};
  if (size < sizeof(header) || !ReadAt(fd, size, 0, sizeof(header), &header, path).ok() ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return InvalidArgument("'{}' is not a shared library (no ELF header)", path);
  }
  const unsigned char own_class = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
  if (header.e_ident[EI_CLASS] != own_class || header.e_type != ET_DYN) {
    return InvalidArgument("'{}' is not a shared library of this machine's kind", path);
  }
  if (header.e_shentsize != sizeof(ElfW(Shdr)) || header.e_shnum == 0) {
    return InvalidArgument("'{}' has no section table to find its symbols in", path);
  }
  std::vector<ElfW(Shdr)> sections(header.e_shnum);
  COLLAGE_RETURN_IF_ERROR(ReadAt(fd, size, header.e_shoff, sections.size() * sizeof(ElfW(Shdr)),
                                 sections.data(), path));
  std::map<std::string, unsigned char> found;
  for (const ElfW(Shdr) & table : sections) {
    if (table.sh_type != SHT_DYNSYM) continue;
    if (table.sh_link >= sections.size() || table.sh_size > kMaxTableBytes ||
        sections[table.sh_link].sh_size > kMaxTableBytes) {
      return InvalidArgument("'{}' has a malformed dynamic symbol table", path);
    }
    const ElfW(Shdr)& strings = sections[table.sh_link];
    std::vector<ElfW(Sym)> symbols(table.sh_size / sizeof(ElfW(Sym)));
    std::string names_text(strings.sh_size, '\0');
    COLLAGE_RETURN_IF_ERROR(ReadAt(fd, size, table.sh_offset, symbols.size() * sizeof(ElfW(Sym)),
                                   symbols.data(), path));
    COLLAGE_RETURN_IF_ERROR(
        ReadAt(fd, size, strings.sh_offset, names_text.size(), names_text.data(), path));
    for (const ElfW(Sym) & symbol : symbols) {
      if (symbol.st_shndx == SHN_UNDEF || symbol.st_name >= names_text.size()) continue;
      const char* name = names_text.data() + symbol.st_name;
      const size_t length = strnlen(name, names_text.size() - symbol.st_name);
      const std::string text(name, length);
      for (const std::string& wanted : names) {
        if (text == wanted) found[wanted] = symbol.st_info;
      }
    }
  }
  return found;
}

}  // namespace

StatusOr<std::set<std::string>> CheckPluginFile(const std::string& path,
                                                const std::vector<std::string>& entry_points) {
  // O_NONBLOCK: opening a FIFO to read would otherwise wait for a writer forever.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NotFound("cannot open backend plug-in '{}': {}", path, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) return IoError("cannot inspect '{}': {}", path, std::strerror(errno));
  if (!S_ISREG(info.st_mode)) {
    return InvalidArgument("backend plug-in '{}' is {}, not a library file", path,
                           KindOf(info.st_mode));
  }
  if (info.st_mode & S_IWOTH) {
    return InvalidArgument(
        "backend plug-in '{}' is writable by every user, so anyone could change the code "
        "collage would run: refused (chmod o-w it)",
        path);
  }
  if (info.st_uid != geteuid() && info.st_uid != 0) {
    return InvalidArgument(
        "backend plug-in '{}' belongs to another user (uid {}): refused; collage loads only "
        "plug-ins owned by you or root",
        path, info.st_uid);
  }
  COLLAGE_ASSIGN_OR_RETURN(
      auto symbols,
      DefinedDynamicSymbols(fd, static_cast<uint64_t>(info.st_size), path, entry_points));
  std::set<std::string> defined;
  for (const std::string& name : entry_points) {
    auto it = symbols.find(name);
    if (it == symbols.end()) continue;
    if (!IsElfFunction(it->second)) {
      return InvalidArgument(
          "'{}' is not a collage backend plug-in: it exports {} as data, not as a function "
          "(define the entry points with COLLAGE_C_PLUGIN or COLLAGE_PLUGIN)",
          path, name);
    }
    defined.insert(name);
  }
  return defined;
}

bool IsElfFunction(unsigned char st_info) {
  const unsigned type = ELF64_ST_TYPE(st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC;
}

Status CheckPluginFolder(const std::string& dir) {
  struct stat info {};
  if (stat(dir.c_str(), &info) != 0) {
    return NotFound("backend plug-in folder '{}' does not exist", dir);
  }
  if (!S_ISDIR(info.st_mode)) return NotFound("backend plug-in folder '{}' is not a folder", dir);
  if (info.st_mode & S_IWOTH) {
    return InvalidArgument(
        "backend plug-in folder '{}' is writable by every user, so anyone could plant a "
        "library collage would run: refused (chmod o-w it, or keep plug-ins in a folder of "
        "your own)",
        dir);
  }
  return Status();
}

}  // namespace collage
