// The process-wide list of folders relative file names are looked for in (file_resolver.h).
#include <kiln/render/file_resolver.h>

namespace kiln::render {

void FileResolver::append(const std::filesystem::path& folder) {
  std::lock_guard<std::mutex> lock(mutex_);
  folders_.push_back(folder);
}

void FileResolver::prepend(const std::filesystem::path& folder) {
  std::lock_guard<std::mutex> lock(mutex_);
  folders_.insert(folders_.begin(), folder);
}

void FileResolver::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  folders_.clear();
}

std::vector<std::filesystem::path> FileResolver::folders() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return folders_;
}

std::filesystem::path FileResolver::resolve(const std::filesystem::path& name) const {
  if (name.is_absolute() || std::filesystem::exists(name)) return name;
  for (const std::filesystem::path& folder : folders())
    if (std::filesystem::path candidate = (folder / name).lexically_normal(); std::filesystem::exists(candidate))
      return candidate;
  return name;
}

FileResolver& file_resolver() {
  static FileResolver resolver;
  return resolver;
}

}  // namespace kiln::render
