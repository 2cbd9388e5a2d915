#include <torchfit/model/compile.h>

namespace torchfit {

nlohmann::json optimizer_hyperparameters(const OptimizerOptions& o, double learning_rate) {
  return {
      {"name", o.name()},       {"learning_rate", learning_rate}, {"beta_1", o.beta_1()},     {"beta_2", o.beta_2()},
      {"epsilon", o.epsilon()}, {"momentum", o.momentum()},       {"nesterov", o.nesterov()}, {"rho", o.rho()}};
}

}  // namespace torchfit
