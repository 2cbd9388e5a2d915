#pragma once
/// @file label_encoder.h
/// Label encoding of a batch: class indices → the y tensor of Keras's class_mode (DirectoryIterator's
/// `categorical`, `sparse`, `binary`, `input`, `None`), for any source that knows each sample's class.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torchfit::data {

/// Keras's class_mode values.
enum class ClassMode {
  categorical,  ///< one-hot float32 (N, K)
  sparse,       ///< class index, int64 (N) (Keras: float32 (N,); LibTorch's losses take int64)
  binary,       ///< class index as float32 0/1, (N, 1) (Keras: (N,)); needs exactly 2 classes
  input,        ///< y = a copy of x (autoencoders)
  none          ///< no labels: y undefined (prediction)
};

/// "categorical" | "sparse" | "binary" | "input" | "none" → ClassMode. Errors: ConfigError naming the
/// value ("class_mode must be categorical, sparse, binary, input or none, got \"…\"").
ClassMode parse_class_mode(const std::string& name);

/// The name parse_class_mode reads for `mode`.
std::string class_mode_name(ClassMode mode);

/// Checks that a source with `num_classes` classes can use `mode`: binary needs exactly 2
/// (ConfigError "class_mode \"binary\" needs exactly 2 classes, SOURCE has K"); the other modes take
/// any number. Keras accepts any number for binary (labels 2, 3, … then reach binary crossentropy).
void check_class_count(ClassMode mode, int64_t num_classes, const std::string& source);

/// The y tensor of a batch whose samples have the class indices `labels` (one per sample, in batch
/// order, each in 0..num_classes−1), as Keras's DirectoryIterator builds it:
/// categorical → float32 (N, num_classes) one-hot; sparse → int64 (N); binary → float32 (N, 1) with
/// the index as value; input → x.clone() (x: the batch's images, (N, C, H, W)); none → an undefined
/// tensor. `pinned`: allocate in page-locked memory (BatchIterator::pin_memory). Errors: IndexError
/// naming a label outside 0..num_classes−1 (categorical, sparse, binary).
at::Tensor encode_labels(ClassMode mode, const std::vector<int64_t>& labels, int64_t num_classes, const at::Tensor& x,
                         bool pinned = false);

}  // namespace torchfit::data
