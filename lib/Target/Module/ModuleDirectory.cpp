//===- ModuleDirectory.cpp - atomic directory writes ----------------------===//
//
// A runtime that loads a module while it is rewritten must see either the old
// or the new directory, never a half-written one: build it aside, then rename.
//
//===----------------------------------------------------------------------===//

#include "ModuleDirectory.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static Error makeError(const Twine &message, std::error_code ec = {}) {
  std::string text = message.str();
  if (ec)
    text += ": " + ec.message();
  return createStringError(ec ? ec : inconvertibleErrorCode(), text);
}

/// Removes `path` if it is there; errors are ignored (best-effort cleanup).
static void removeTree(StringRef path) {
  if (sys::fs::exists(path))
    (void)sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
}

static Error writeFiles(StringRef dir, ArrayRef<mlir::snn::DirectoryFile> files) {
  for (const auto &[name, contents] : files) {
    SmallString<256> path(dir);
    sys::path::append(path, name);
    std::error_code ec;
    raw_fd_ostream os(path, ec, sys::fs::OF_None);
    if (ec)
      return makeError("cannot create '" + path + "'", ec);
    os << contents;
    os.close();
    if (os.has_error())
      return makeError("cannot write '" + path + "'", os.error());
  }
  return Error::success();
}

Error mlir::snn::writeDirectoryAtomically(StringRef dir,
                                          ArrayRef<DirectoryFile> files) {
  if (dir.empty())
    return makeError("no output directory given");
  sys::fs::file_status status;
  bool exists = !sys::fs::status(dir, status);
  if (exists && status.type() != sys::fs::file_type::directory_file)
    return makeError("'" + dir +
                     "' exists and is not a directory; remove it or choose "
                     "another output");

  std::string pid = std::to_string(sys::Process::getProcessId());
  std::string tmp = (dir + ".tmp-" + pid).str();
  removeTree(tmp);
  if (std::error_code ec = sys::fs::create_directory(tmp, /*IgnoreExisting=*/false))
    return makeError("cannot create '" + tmp +
                         "' (check that the parent directory exists and is "
                         "writable)",
                     ec);
  if (Error err = writeFiles(tmp, files)) {
    removeTree(tmp);
    return err;
  }

  // rename(2) does not replace a non-empty directory: move the old one aside
  // first and drop it once the new one is in place.
  std::string old = (dir + ".old-" + pid).str();
  if (exists) {
    removeTree(old);
    if (std::error_code ec = sys::fs::rename(dir, old)) {
      removeTree(tmp);
      return makeError("cannot replace '" + dir + "'", ec);
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, dir)) {
    if (exists)
      (void)sys::fs::rename(old, dir);
    removeTree(tmp);
    return makeError("cannot rename '" + tmp + "' to '" + dir + "'", ec);
  }
  if (exists)
    removeTree(old);
  return Error::success();
}
