// Build identity from the library file (see build_id.h).
#include "util/build_id.h"

#include "util/hash.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

namespace kiln::detail {
namespace {

std::string compute_build_id() {
  std::string id = KILN_VERSION;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&build_id), &info) || !info.dli_fname) return id;
  std::ifstream file(info.dli_fname, std::ios::binary | std::ios::ate);
  std::vector<char> bytes(size_t(std::max<std::streamoff>(file.tellg(), 0)));
  file.seekg(0);
  file.read(bytes.data(), std::streamsize(bytes.size()));
  char text[24];
  std::snprintf(text, sizeof(text), "+%016llx", (unsigned long long)hash_bytes(bytes.data(), bytes.size()));
  return id + text;
}

}  // namespace

const std::string& build_id() {
  static const std::string id = compute_build_id();
  return id;
}

}  // namespace kiln::detail
