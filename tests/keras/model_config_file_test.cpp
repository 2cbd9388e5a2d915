// keras::find_model_config: where an architecture file named on a command line is (as given; a bare name
// also where torchfit's shipped architectures lie), and the refusals naming what was tried.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <torchfit/error.h>
#include <torchfit/keras/model_config_file.h>

#include "support/temp_dir.h"

using torchfit::keras::find_model_config;

namespace model_config_file_test {

std::string message_of(const std::string& file, const std::vector<std::string>& dirs) {
  try {
    find_model_config(file, dirs);
  } catch (const torchfit::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(FindModelConfig, AsGivenThenABareNameWhereTheShippedArchitecturesLie) {
  torchfit::testing::TempDir dir("find_model_config");
  std::filesystem::create_directories(dir.path / "models");
  std::ofstream(dir.file("models/tiny.json")) << "{}";
  std::ofstream(dir.file("here.json")) << "{}";
  EXPECT_EQ(find_model_config(dir.file("here.json")), dir.file("here.json"));
  EXPECT_EQ(find_model_config("tiny.json", {dir.file("models")}), dir.file("models/tiny.json"));
  // A name with a folder part is only looked up as given.
  EXPECT_EQ(message_of("sub/tiny.json", {dir.file("models")}), "file not found (tried 'sub/tiny.json')");
  const std::string missing = message_of("nowhere.json", {dir.file("models")});
  EXPECT_EQ(missing.rfind("file not found (tried 'nowhere.json', '", 0), 0u) << missing;
  EXPECT_NE(missing.find("'" + dir.file("models") + "/nowhere.json')"), std::string::npos) << missing;
  EXPECT_EQ(message_of(dir.file("models"), {}), "'" + dir.file("models") + "' is a directory, not a model config file");
  const std::string long_name(300, 'x');
  EXPECT_NE(message_of(dir.file(long_name), {}).find("File name too long"), std::string::npos);
}

}  // namespace model_config_file_test
