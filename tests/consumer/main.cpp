// Builds the article's CNN through the installed package and prints its parameter count.
#include <iostream>

#include <torchfit/torchfit.h>  // the umbrella header compiles in a consumer

int main() {
  auto model = torchfit::seed_cnn(150, 8, 64);
  std::cout << model->count_params() << "\n";
  return model->count_params() == 42520584 ? 0 : 1;
}
