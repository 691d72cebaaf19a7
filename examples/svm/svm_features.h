#pragma once
// The digits data as the SVM's features: each 8x8 image becomes 64 floats,
// the intensities 0..16 scaled to 0..1 (so one learning rate suits every
// pixel), with its digit as the label.
#include "digits_data.h"
#include "svm_model.h"

namespace svm {

Features FromDigits(const digits::Dataset& data);

}  // namespace svm
