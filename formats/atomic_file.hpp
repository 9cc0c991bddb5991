// Output files are written whole or not at all: into a temporary file beside the target, then
// renamed over it. A failure (or an exception from `write`) removes the temporary file.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace cgs {

// Calls write(file) on a temporary file and renames it to `path`. Throws InputError naming
// `path` when it cannot be created, written or renamed.
void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write);

// The same for text already in memory.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace cgs
