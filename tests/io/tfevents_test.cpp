// TensorBoard event files: CRC-32C against the standard check value, and the files read back by an
// independent reader (scripts/read_tfevents.py: its own CRC-32C and protocol-buffer decoding).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <torchfit/error.h>
#include <torchfit/io/tfevents.h>

#include "support/python_reference.h"
#include "support/temp_dir.h"

using namespace torchfit;

namespace {

// Runs the reader on `dir`; its JSON ({sub-folder: {tag: [[step, value, plugin], ...]}}).
torchfit::testing::PythonResult read_back(const std::string& dir) {
  return torchfit::testing::run_python({"os"},
                                       "sys.path.insert(0, data['scripts'])\nimport read_tfevents\n"
                                       "out = read_tfevents.read_dir(data['dir'])\n",
                                       {{"scripts", std::string(TORCHFIT_SOURCE_DIR) + "/scripts"}, {"dir", dir}});
}

}  // namespace

TEST(TfEvents, Crc32cHasTheStandardCheckValue) {
  EXPECT_EQ(io::crc32c("123456789", 9), 0xE3069283u);  // RFC 3720 / iSCSI check value
  EXPECT_EQ(io::crc32c("", 0), 0u);
  const uint32_t c = io::crc32c("123456789", 9);
  EXPECT_EQ(io::masked_crc32c("123456789", 9), ((c >> 15) | (c << 17)) + 0xA282EAD8u);
}

TEST(TfEvents, RecordFraming) {
  const std::string r = io::tfrecord("abc");
  ASSERT_EQ(r.size(), 8u + 4u + 3u + 4u);
  uint64_t length = 0;
  std::memcpy(&length, r.data(), 8);
  EXPECT_EQ(length, 3u);
  uint32_t crc = 0;
  std::memcpy(&crc, r.data() + 15, 4);
  EXPECT_EQ(crc, io::masked_crc32c("abc", 3));
}

TEST(TfEvents, AnIndependentReaderDecodesTheScalars) {
  torchfit::testing::TempDir dir("tfevents");
  {
    io::EventFileWriter train((dir.path / "train").string());
    io::EventFileWriter validation((dir.path / "validation").string());
    for (int step = 0; step < 3; ++step) {
      train.add_scalar("epoch_loss", 1.0 / (step + 1), step);
      train.add_scalar("epoch_learning_rate", 1e-3, step);
      validation.add_scalar("epoch_loss", 2.5 - step, step);
    }
    EXPECT_NE(train.path().find("/train/events.out.tfevents."), std::string::npos) << train.path();
  }
  const auto r = read_back(dir.str());
  TORCHFIT_REQUIRE_PYTHON(r);
  const auto& loss = r.out.at("train").at("epoch_loss");
  ASSERT_EQ(loss.size(), 3u);
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(loss[step][0].get<int>(), step);
    EXPECT_EQ(loss[step][1].get<double>(), static_cast<double>(static_cast<float>(1.0 / (step + 1))));
    EXPECT_EQ(loss[step][2].get<std::string>(), "scalars");
    EXPECT_EQ(r.out.at("validation").at("epoch_loss")[step][1].get<double>(), 2.5 - step);
  }
  EXPECT_FLOAT_EQ(r.out.at("train").at("epoch_learning_rate")[2][1].get<double>(), 1e-3f);
}

TEST(TfEvents, TheReaderRejectsACorruptedRecord) {
  torchfit::testing::TempDir dir("tfevents_bad");
  std::string path;
  {
    io::EventFileWriter w(dir.str());
    w.add_scalar("epoch_loss", 0.5, 1);
    path = w.path();
  }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-6, std::ios::end);  // inside the last payload
    f.put('\x7f');
  }
  const auto r = read_back(dir.str());
  if (!r.skip.empty()) GTEST_SKIP() << r.skip;
  EXPECT_NE(r.error.find("bad data CRC"), std::string::npos) << r.error;
}

TEST(TfEvents, UnwritableFolderIsAnIoErrorNamingIt) {
  torchfit::testing::TempDir dir("tfevents_ro");
  std::ofstream(dir.file("file")) << "x";
  try {
    io::EventFileWriter w(dir.file("file") + "/sub");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("file")), std::string::npos) << e.what();
  }
}
