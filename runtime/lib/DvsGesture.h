//===- DvsGesture.h - DVS128 Gesture recordings (AEDAT 3.1) -----*- C++ -*-===//
//
// Read through loadEventDirectory (snnrt/Dataset.h); see DvsGesture.cpp for
// the format and the binning.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_LIB_DVSGESTURE_H
#define SNNRT_LIB_DVSGESTURE_H

#include "snnrt/Dataset.h"

namespace snnrt {

/// Whether `dir` holds the DVS128 Gesture archive (trials_to_train.txt).
bool isDvsGestureDirectory(const std::string &dir);
/// Whether it lists test trials too (trials_to_test.txt).
bool dvsGestureHasTestSplit(const std::string &dir);
/// The gestures of the trials `split` ("train"/"test") lists.
Dataset loadDvsGesture(const std::string &dir, const std::string &split,
                       size_t sampleSize, int64_t steps, double duration);

} // namespace snnrt

#endif // SNNRT_LIB_DVSGESTURE_H
