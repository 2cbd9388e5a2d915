// An optimizer's variables for the Keras writers (keras_optimizer_state.h).
#include <torchfit/training/keras_optimizer_state.h>

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/keras_optimizers.h>
#include <torchfit/training/optimizers.h>
#include <torchfit/training/resume.h>
#include <torchfit/training/trainer.h>

#include "../compat/libtorch_version.h"

namespace torchfit {
namespace {

struct Layout {
  std::string class_name;
  std::vector<std::vector<std::string>> groups;
  std::map<std::string, std::string> keras2_names;
};

Layout layout_of(const OptimizerOptions& o) {
  if (o.name() == "adam" || o.name() == "adamw") {
    Layout l{o.name() == "adam" ? "Adam" : "AdamW", {{"momentum", "velocity"}}, {{"momentum", "m"}, {"velocity", "v"}}};
    if (o.amsgrad()) {
      l.groups.push_back({"velocity_hat"});
      l.keras2_names["velocity_hat"] = "vhat";
    }
    return l;
  }
  if (o.name() == "sgd") {
    Layout l{"SGD", {}, {{"momentum", "momentum"}}};
    if (o.momentum() > 0) l.groups.push_back({"momentum"});
    return l;
  }
  if (o.name() == "rmsprop") {
    Layout l{"RMSprop", {{"velocity"}}, {{"velocity", "rms"}, {"momentum", "momentum"}, {"average_gradient", "mg"}}};
    if (o.momentum() > 0) l.groups.push_back({"momentum"});
    if (o.centered()) l.groups.push_back({"average_gradient"});
    return l;
  }
  throw ConfigError("optimizer '" + o.name() +
                    "': its variables are not written to Keras files (those of adam, adamw, sgd and rmsprop are)");
}

// The slots of `p` by Keras name, from the optimizer's state (zeros before its first update).
std::map<std::string, at::Tensor> slots_of(const torch::optim::Optimizer& optimizer, const at::Tensor& p,
                                           const OptimizerOptions& o, double lr) {
  const auto it = optimizer.state().find(compat::optimizer_state_key(p));
  const auto zeros = at::zeros_like(p, at::MemoryFormat::Contiguous);
  std::map<std::string, at::Tensor> out;
  const auto* state = it == optimizer.state().end() ? nullptr : it->second.get();
  const auto or_zeros = [&](const at::Tensor& t) { return t.defined() ? t.detach().contiguous() : zeros; };
  if (const auto* keras = dynamic_cast<const KerasSlotState*>(state)) {
    const std::map<std::string, std::string> names = {
        {"square_avg", "velocity"}, {"momentum_buffer", "momentum"}, {"grad_avg", "average_gradient"}};
    for (const auto& [name, t] : keras->slots) out[names.count(name) ? names.at(name) : name] = or_zeros(t);
  } else if (const auto* adam = dynamic_cast<const torch::optim::AdamParamState*>(state)) {
    out = {{"momentum", or_zeros(adam->exp_avg())},
           {"velocity", or_zeros(adam->exp_avg_sq())},
           {"velocity_hat", or_zeros(adam->max_exp_avg_sq())}};
  } else if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(state)) {
    out = {{"momentum", sgd->momentum_buffer().defined() ? (-lr) * sgd->momentum_buffer().detach() : zeros}};
  }
  for (const auto& group : layout_of(o).groups)
    for (const auto& name : group) out.emplace(name, zeros);  // not updated yet: Keras's zero slots
  return out;
}

}  // namespace

keras::KerasOptimizerState keras_optimizer_state(const torch::optim::Optimizer& optimizer,
                                                 const OptimizerOptions& options, int64_t iterations) {
  const OptimizerOptions o = options.resolved();
  if (o.use_ema() || o.gradient_accumulation_steps() > 1) {
    throw ConfigError("optimizer '" + o.name() + "': the variables of use_ema and gradient_accumulation_steps " +
                      "are not written to Keras files yet");
  }
  Layout layout = layout_of(o);
  keras::KerasOptimizerState state;
  state.class_name = layout.class_name;
  state.groups = layout.groups;
  state.keras2_names = layout.keras2_names;
  state.iterations = iterations;
  const auto& groups = optimizer.param_groups();
  const double lr = groups.empty() ? o.learning_rate() : groups.front().options().get_lr();
  if (!o.learning_rate_schedule()) state.learning_rate = lr;
  for (const auto& group : groups)
    for (const auto& p : group.params()) state.slots[p.unsafeGetTensorImpl()] = slots_of(optimizer, p, o, lr);
  return state;
}

keras::KerasOptimizerState checkpoint_optimizer_state(const std::string& path, Model& model) {
  const auto checkpoint = saving::Checkpoint::read(path);
  const saving::CheckpointInfo& info = checkpoint->info();
  const OptimizerOptions o = saved_optimizer_options(info);
  const auto optimizer = make_optimizer(o, model->parameters());
  saving::TrainingState state;
  state.model = model;
  state.optimizer = optimizer.get();
  state.compile = CompileOptions().optimizer(o);
  saving::load_checkpoint(*checkpoint, state);
  const auto& features = info.optimizer_features;
  return keras_optimizer_state(*optimizer, o, features.is_object() ? features.value("iterations", int64_t{0}) : 0);
}

std::string save_keras_file(Trainer& trainer, const std::string& path,
                            const std::map<std::string, int64_t>& class_indices) {
  const CompileOptions& c = trainer.compile_options();
  keras::KerasSaveOptions options;  // the run's compile settings, as its checkpoint records them
  // Several outputs: Keras's per-output lists or objects (compile(loss=[…], loss_weights=…, metrics=…)).
  options.compile = {{"loss", c.output_losses().is_null() ? nlohmann::json(c.loss()) : c.output_losses()},
                     {"metrics", c.output_metrics().is_null() ? nlohmann::json(c.metrics()) : c.output_metrics()},
                     {"optimizer", optimizer_config(c.optimizer(), resolved_learning_rate(c.optimizer()))}};
  if (!c.loss_weights().is_null()) options.compile["loss_weights"] = c.loss_weights();
  if (!c.weighted_metrics().is_null()) options.compile["weighted_metrics"] = c.weighted_metrics();
  try {
    options.optimizer =
        keras_optimizer_state(trainer.optimizer(), c.optimizer(), trainer.optimizer_features().iterations());
  } catch (const ConfigError& e) {
    logger().warn("{}: written without the optimizer's variables: {}", path, e.what());
  }
  options.torchfit = keras::torchfit_metadata(class_indices, trainer.preprocessing());
  return keras::save_keras_file(*trainer.model(), path, options);
}

}  // namespace torchfit
