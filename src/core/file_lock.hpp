// An exclusive advisory lock on a file (flock), held for the object's lifetime: serialises work
// across processes (and threads: each lock opens its own descriptor, and flock's locks belong to
// the open file, so two in one process exclude each other too). kiln's judge takes one around
// each judgement on a GPU, so that searches running side by side compile at once but time their
// kernels one at a time.
#pragma once

#include <string>

namespace kiln::core {

class ExclusiveFileLock {
 public:
  // Blocks until the lock on `path` (created if missing) is held; throws kiln::Error naming the
  // path when it cannot be opened or locked.
  explicit ExclusiveFileLock(const std::string& path);
  ~ExclusiveFileLock();
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;

  // Whether another holder has `path` locked now (a probe that takes and drops the lock).
  static bool held_elsewhere(const std::string& path);

 private:
  int fd_ = -1;
};

}  // namespace kiln::core
