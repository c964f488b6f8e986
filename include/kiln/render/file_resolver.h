// Where relative file names in scenes are looked for (Mitsuba's FileResolver,
// `mi.file_resolver().append(folder)`): a process-wide list of folders, tried in order after
// the places a scene's own paths start from (an XML file's folder and its <path> elements;
// the working directory for dicts).
//
// What an implementation guarantees:
// - resolve() returns the first existing `folder / name` (folders in list order), else
//   `name` unchanged, so the error about a missing file names what the scene gave.
// - Absolute names are returned as they are. The list is safe to change from any thread.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::render {

class FileResolver {
 public:
  void append(const std::filesystem::path& folder);
  void prepend(const std::filesystem::path& folder);
  void clear();
  std::vector<std::filesystem::path> folders() const;
  /// `name` found in the working directory or a folder of the list, else `name`.
  std::filesystem::path resolve(const std::filesystem::path& name) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::filesystem::path> folders_;
};

/// The process's resolver.
FileResolver& file_resolver();

}  // namespace kiln::render
