#pragma once
/// @file arrays.h
/// In-memory arrays for fit/evaluate/predict (Keras Model.fit(x, y, sample_weight=…)): the triple, its
/// checks, Keras's validation_split, and arrays read from .npy/.npz/CSV files.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torchfit::data {

/// The arrays of Keras's fit(x, y, sample_weight): x (N, ...) the inputs (LibTorch's order: images
/// (N, C, H, W)), y (N, ...) the targets (undefined: none, for predict), sample_weight (N) or (N, ...)
/// each sample's weight of the loss (undefined: 1 each). A sample is an index along axis 0 of each.
struct Arrays {
  Arrays() = default;
  Arrays(at::Tensor x_, at::Tensor y_ = {}, at::Tensor sample_weight_ = {})
      : x(std::move(x_)), y(std::move(y_)), sample_weight(std::move(sample_weight_)) {}
  /// Several inputs / outputs (Keras's fit(x=[a, b], y=[c, d])): x is the first input, y the first target.
  Arrays(std::vector<at::Tensor> xs, std::vector<at::Tensor> ys, at::Tensor sample_weight_ = {});
  at::Tensor x, y, sample_weight;
  /// Inputs 2… / targets 2… of a model with several (in its input / output order); empty for one.
  std::vector<at::Tensor> more_x, more_y;
  /// Every input {x, more_x…} / target {y, more_y…} (empty where x / y is undefined).
  std::vector<at::Tensor> inputs() const;
  std::vector<at::Tensor> targets() const;
  /// Samples: x's size along axis 0 (0 when x is undefined or 0-d).
  int64_t samples() const { return x.defined() && x.dim() > 0 ? x.size(0) : 0; }
};

/// Keras's fit(x={name: array}, y={name: array}): the arrays by input and output name, put in the model's
/// order (`input_names`, `output_names`: ModelImpl::input_names / output_names). `y` may be empty (predict).
/// Errors: ConfigError naming an input or output that has no array, or a name the model does not have
/// (listing its names).
Arrays arrays_by_name(const std::map<std::string, at::Tensor>& x, const std::map<std::string, at::Tensor>& y,
                      const std::vector<std::string>& input_names, const std::vector<std::string>& output_names,
                      at::Tensor sample_weight = {});

/// The arrays as Keras's data adapter hands them to the model: each checked, floating-point ones cast to
/// float32 (Keras's floatx; integer ones kept, e.g. sparse class labels), on the CPU. `who` starts each
/// message ("fit", "fit: validation_data", "evaluate"). `need_y`: y must be given.
/// Errors: ConfigError for x without samples (undefined, 0-d, or N = 0), y or sample_weight of another
/// length than x ("fit: x has 100 samples but y has 90", Keras's "Data cardinality is ambiguous"; further
/// inputs and targets are named "x[1]", "y[1]" …), a missing y when `need_y`, a 0-d y, a sample_weight that
/// is not floating-point or holds NaN/±inf.
Arrays standardize_arrays(const Arrays& arrays, const std::string& who, bool need_y = true);

/// Keras 3's train_validation_split (keras/src/trainers/data_adapters/array_slicing.py): the first
/// floor(N · (1 − validation_split)) samples train, the rest validate — the LAST fraction, in the
/// arrays' order (fit shuffles only the training part, after the split). Every array (x, y,
/// sample_weight, the further inputs and targets) is split at the same index; the parts are views of the inputs.
/// Errors: ConfigError for validation_split outside (0, 1) or not a number, and (Keras's message) when
/// either part would be empty: "x has 4 samples, which is not sufficient to split it into a validation
/// and training set as specified by validation_split=0.1".
std::pair<Arrays, Arrays> train_validation_split(const Arrays& arrays, double validation_split);

/// The array in the file `spec`: "x.npy" (numpy.save), "data.npz:x" (a member of numpy.savez's file; a
/// bare "data.npz" when it holds one array), or a CSV/text file "x.csv" (every other extension) read as
/// one float32 number per cell: rows = samples, columns (N, C) — (N) when the file has one column. A
/// CSV's first row is skipped as a header when none of its cells is a number. `separator`: the CSV's
/// field separator (',' default; ' ' reads whitespace-separated text such as np.savetxt writes, any run
/// of spaces or tabs between numbers). .npy/.npz arrays keep their dtype (io/npy.h).
/// Errors: IoError naming the file (and member) for what io::read_npy/read_npz/read_csv say, a .npz
/// member that is not there (listing the members), a bare .npz with several members, a CSV with rows of
/// different lengths or a cell that is not a number (naming the line and the cell), or a CSV without rows.
at::Tensor load_array(const std::string& spec, char separator = ',');

}  // namespace torchfit::data
