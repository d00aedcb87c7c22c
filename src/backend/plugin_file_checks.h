// What a file must be before collage loads it as a backend plug-in. dlopen runs a library's
// constructors before collage can look at its symbols, and blocks forever on a FIFO, so every
// check here reads the file as data first.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "collage/status.h"

namespace collage {

// A regular file (a link may lead to one), not writable by everyone, owned by this user or
// root, and an ELF shared library of this machine's class. Returns which of `entry_points`
// its dynamic symbol table defines; refuses one it defines as data, not as a function.
StatusOr<std::set<std::string>> CheckPluginFile(const std::string& path,
                                                const std::vector<std::string>& entry_points);

// Whether an ELF symbol of type info `st_info` is a function (plain or indirect): what a
// plug-in's entry points must be, in the file and as the loader bound them.
bool IsElfFunction(unsigned char st_info);

// A folder collage lists plug-ins from: not writable by everyone (anyone could plant a
// lib*.so there, sticky bit or not).
Status CheckPluginFolder(const std::string& dir);

}  // namespace collage
