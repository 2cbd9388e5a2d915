// Trainer on in-memory arrays (Keras Model.fit(x, y, sample_weight=…, validation_split=…)): the arrays
// become TensorIterators and go through the one fit loop.
#include <torchfit/training/trainer.h>

#include <cmath>
#include <memory>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

namespace torchfit {

// Keras 3 (Model.fit): `if validation_split and validation_data is None`, split the arrays, the last
// fraction validating; the training part is then shuffled per epoch.
History Trainer::fit_split(data::BatchIterator& train, const FitOptions& options) {
  const double split = options.validation_split();
  if (!(split > 0.0 && split < 1.0)) {
    throw ConfigError("fit: validation_split must be in (0, 1) (0 = none), got " + std::to_string(split));
  }
  FitOptions opt = options;
  opt.validation_split(0.0);
  if (opt.validation_data()) {
    torchfit::logger().info("fit: validation_split {} is ignored: validation_data is given (as Keras)", split);
    return fit(train, opt);
  }
  auto [part, validation] = train.train_validation_split(split);
  opt.validation_data(validation.get());
  return fit(*part, opt);
}

History Trainer::fit(const data::Arrays& data, const FitOptions& options, const ArrayOptions& arrays) {
  const data::Arrays train = data::standardize_arrays(data, "fit");
  if (!options.class_weight().empty() && train.sample_weight.defined()) {
    throw ConfigError(
        "fit: class_weight and sample_weight cannot be given together (Keras 3: \"You cannot "
        "`class_weight` and `sample_weight` at the same time\"); fold the class weights into the "
        "sample weights");
  }
  if (arrays.batch_size() <= 0) {
    throw ConfigError("fit: batch_size must be > 0, got " + std::to_string(arrays.batch_size()));
  }
  FitOptions opt = options;
  std::unique_ptr<data::TensorIterator> validation;
  if (arrays.validation_data()) {
    if (opt.validation_data()) {
      throw ConfigError(
          "fit: validation_data is given twice (as arrays in ArrayOptions and as a source in FitOptions)");
    }
    const data::Arrays v = data::standardize_arrays(*arrays.validation_data(), "fit: validation_data");
    validation = std::make_unique<data::TensorIterator>(v, arrays.batch_size());
    opt.validation_data(validation.get());
  }
  data::TensorIterator source(train, arrays.batch_size(), arrays.shuffle(), arrays.seed());
  return fit(source, opt);
}

Logs Trainer::evaluate(const data::Arrays& data, int64_t batch_size) {
  if (batch_size <= 0) throw ConfigError("evaluate: batch_size must be > 0, got " + std::to_string(batch_size));
  data::TensorIterator source(data::standardize_arrays(data, "evaluate"), batch_size);
  return evaluate(source, 0);
}

std::vector<at::Tensor> Trainer::predict_outputs(const data::Arrays& x, int64_t batch_size) {
  if (batch_size <= 0) throw ConfigError("predict: batch_size must be > 0, got " + std::to_string(batch_size));
  data::Arrays inputs(x.inputs(), {});
  data::TensorIterator source(data::standardize_arrays(inputs, "predict", false), batch_size);
  return predict_outputs(source, 0);
}

at::Tensor Trainer::predict(const at::Tensor& x, int64_t batch_size) {
  if (batch_size <= 0) throw ConfigError("predict: batch_size must be > 0, got " + std::to_string(batch_size));
  data::TensorIterator source(data::standardize_arrays(data::Arrays(x), "predict", false), batch_size);
  return predict(source, 0);
}

}  // namespace torchfit
