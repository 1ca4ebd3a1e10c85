//===- Error.h - the one error type of libsnnrt -----------------*- C++ -*-===//

#ifndef SNNRT_ERROR_H
#define SNNRT_ERROR_H

#include <stdexcept>
#include <string>

namespace snnrt {

/// Every failure of the runtime: the message names the file, op or tensor,
/// says what is wrong and, where it can, what to do. snn-run prints it and
/// exits with status 1.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace snnrt

#endif // SNNRT_ERROR_H
