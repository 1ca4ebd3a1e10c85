//===- ModuleDirectory.h - atomic directory writes --------------*- C++ -*-===//

#ifndef SNN_LIB_TARGET_MODULE_MODULEDIRECTORY_H
#define SNN_LIB_TARGET_MODULE_MODULEDIRECTORY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace mlir::snn {

/// A file of the directory: its name (no path separators) and its contents.
using DirectoryFile = std::pair<std::string, std::string>;

/// Writes `files` into a fresh `dir.tmp-<pid>` and renames it to `dir`,
/// replacing a previous directory of that name. On failure nothing new is left
/// on disk and a previous `dir` is kept.
llvm::Error writeDirectoryAtomically(llvm::StringRef dir,
                                     llvm::ArrayRef<DirectoryFile> files);

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_MODULEDIRECTORY_H
