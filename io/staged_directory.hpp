#pragma once
// An output folder that appears whole or not at all: its files are written into a
// temporary sibling ("DIR.tmp-XXXXXX", made by mkdtemp beside DIR), which commit() renames
// to DIR. If the work fails before commit() the temporary folder is removed, so a failed
// command leaves nothing behind. DIR must not exist yet, or be an empty folder (rename(2)
// replaces an empty folder); a non-empty DIR is refused before any work starts. A command
// killed before commit() leaves its temporary folder: the next StagedDirectory for DIR
// removes it (the live one is held with flock until it is renamed or removed).
#include <string>

namespace lockstep::arch {

// Throws InputError unless `dir` can be made as a staged folder: it is missing or an empty
// folder, and the nearest existing folder above it is writable. Creates nothing.
void check_staged_directory(const std::string& dir, const std::string& option);

class StagedDirectory {
 public:
  // Checks as above, makes the folders above `dir`, removes stale "DIR.tmp-XXXXXX" folders
  // (io/atomic_file.hpp, remove_stale_temporaries), then makes the temporary sibling.
  StagedDirectory(std::string dir, std::string option);
  ~StagedDirectory();  // removes the temporary folder unless committed
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  // Where to write the files now: the temporary folder.
  const std::string& path() const { return temp_; }
  // `name` inside the temporary folder (subfolders of it are made as needed by the caller).
  std::string file(const std::string& name) const;
  // Renames the temporary folder to the final one. InputError on failure (then removed).
  void commit();

 private:
  std::string dir_;
  std::string option_;
  std::string temp_;
  int hold_ = -1;  // the temporary folder, open and flocked until renamed or removed
  bool committed_ = false;
};

}  // namespace lockstep::arch
