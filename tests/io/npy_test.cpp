// io/npy.h against files NumPy wrote (numpy.save, numpy.lib.format.write_array with versions 1.0/2.0/3.0,
// numpy.savez, numpy.savez_compressed), read back by NumPy for the expected values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>

#include <torchfit/error.h>
#include <torchfit/io/npy.h>

#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace torchfit::npy_test {

namespace {

// Writes the files into data["dir"]; out[name] = {"values": flat C-order list (float64), "shape": [...]}.
const char* kWriteArrays = R"(
import numpy as np
d = data["dir"]
rng = np.random.default_rng(7)
base = rng.normal(size=(3, 4, 2)) * 50
arrays = {
    "f4": base.astype("<f4"), "f8": base.astype("<f8"), "f2": base.astype("<f2"),
    "i1": np.clip(base, -128, 127).astype("i1"), "i2": (base * 300).astype("<i2"), "i4": (base * 1e6).astype("<i4"),
    "i8": (base * 1e15).astype("<i8"), "u1": np.abs(base).astype("u1"), "u2": (np.abs(base) * 1000).astype("<u2"),
    "u4": (np.abs(base) * 4e7).astype("<u4"), "u8": (np.abs(base) * 1e15).astype("<u8"), "b1": base > 0,
    "scalar": np.array(3.5, dtype="<f4"), "empty": np.zeros((0, 3), dtype="<f4"), "vector": np.arange(5, dtype="<i8"),
}
arrays["fortran"] = np.asfortranarray(base.astype("<f4"))
arrays["fortran2d"] = np.asfortranarray(rng.normal(size=(5, 3)).astype("<f8"))
out = {}
for name, a in arrays.items():
    np.save(f"{d}/{name}.npy", a)
    out[name] = {"values": a.astype("f8").ravel(order="C").tolist(), "shape": list(a.shape)}
assert np.isfortran(np.load(f"{d}/fortran.npy"))
for version in [(1, 0), (2, 0), (3, 0)]:
    with open(f"{d}/v{version[0]}.npy", "wb") as f:
        np.lib.format.write_array(f, base.astype("<f4"), version=version)
out["v"] = {"values": base.astype("<f4").astype("f8").ravel().tolist(), "shape": list(base.shape)}
np.savez(f"{d}/plain.npz", x=base.astype("<f4"), y=np.arange(3, dtype="<i8"))
np.savez_compressed(f"{d}/compressed.npz", x=base.astype("<f4"), w=np.linspace(0, 1, 3).astype("<f8"))
out["w"] = {"values": np.linspace(0, 1, 3).tolist(), "shape": [3]}
# Bad files.
np.save(f"{d}/big_endian.npy", base.astype(">f4"))
np.save(f"{d}/object.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
np.save(f"{d}/structured.npy", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))
np.save(f"{d}/complex.npy", np.zeros(3, dtype="<c8"))
raw = open(f"{d}/f4.npy", "rb").read()
open(f"{d}/truncated.npy", "wb").write(raw[:-7])
open(f"{d}/header_cut.npy", "wb").write(raw[:40])
open(f"{d}/no_magic.npy", "wb").write(b"PK" + raw[2:])
open(f"{d}/bad_header.npy", "wb").write(raw.replace(b"'shape'", b"'shapf'"))
)";

void expect_array(const at::Tensor& t, const nlohmann::json& ref, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_EQ(t.sizes().vec(), ref["shape"].get<std::vector<int64_t>>());
  EXPECT_TRUE(t.is_contiguous());
  const auto want = ref["values"].get<std::vector<double>>();
  const at::Tensor flat = t.to(at::kDouble).reshape({-1});
  ASSERT_EQ(flat.numel(), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < flat.numel(); ++i) EXPECT_EQ(flat[i].item<double>(), want[i]) << i;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const IoError& e) {
    return e.what();
  }
  return "(no IoError)";
}

}  // namespace

TEST(Npy, ReadsEveryDtypeOrderAndVersionNumPyWrites) {
  torchfit::testing::TempDir dir("npy");
  const auto ref = torchfit::testing::run_python({"numpy"}, kWriteArrays, {{"dir", dir.path.string()}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  const std::map<std::string, at::ScalarType> types = {{"f4", at::kFloat}, {"f8", at::kDouble}, {"f2", at::kHalf},
                                                       {"i1", at::kChar},  {"i2", at::kShort},  {"i4", at::kInt},
                                                       {"i8", at::kLong},  {"u1", at::kByte},   {"u2", at::kInt},
                                                       {"u4", at::kLong},  {"u8", at::kLong},   {"b1", at::kBool}};
  for (const auto& [name, type] : types) {
    const at::Tensor t = io::read_npy(dir.file(name + ".npy"));
    EXPECT_EQ(t.scalar_type(), type) << name;
    expect_array(t, ref.out[name], name);
  }
  for (const char* name : {"scalar", "empty", "vector", "fortran", "fortran2d"})
    expect_array(io::read_npy(dir.file(std::string(name) + ".npy")), ref.out[name], name);
  EXPECT_EQ(io::read_npy(dir.file("scalar.npy")).dim(), 0);
  for (const char* v : {"v1", "v2", "v3"})
    expect_array(io::read_npy(dir.file(std::string(v) + ".npy")), ref.out["v"], v);
}

TEST(Npy, ReadsNpzStoredAndCompressed) {
  if (!io::npz_available()) {
    torchfit::testing::TempDir dir("npz_off");
    EXPECT_NE(error_of([&] { io::read_npz(dir.file("a.npz")); }).find("without libzip"), std::string::npos);
    GTEST_SKIP() << "built without libzip";
  }
  torchfit::testing::TempDir dir("npz");
  const auto ref = torchfit::testing::run_python({"numpy"}, kWriteArrays, {{"dir", dir.path.string()}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  const auto plain = io::read_npz(dir.file("plain.npz"));
  ASSERT_EQ(plain.size(), 2u);
  expect_array(plain.at("x"), ref.out["v"], "plain x");
  EXPECT_EQ(plain.at("y").scalar_type(), at::kLong);
  EXPECT_TRUE(plain.at("y").equal(at::arange(3, at::kLong)));
  const auto packed = io::read_npz(dir.file("compressed.npz"));
  expect_array(packed.at("x"), ref.out["v"], "compressed x");
  expect_array(packed.at("w"), ref.out["w"], "compressed w");
  const std::string e = error_of([&] { io::read_npz(dir.file("f4.npy")); });
  EXPECT_NE(e.find("f4.npy"), std::string::npos) << e;
  EXPECT_NE(e.find("zip"), std::string::npos) << e;
}

TEST(Npy, BadFilesGiveErrorsNamingTheFile) {
  torchfit::testing::TempDir dir("npy_bad");
  const auto ref = torchfit::testing::run_python({"numpy"}, kWriteArrays, {{"dir", dir.path.string()}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"big_endian", "big-endian"},       {"object", "object array"},
      {"structured", "structured dtype"}, {"complex", "unsupported dtype"},
      {"truncated", "truncated file"},    {"header_cut", "truncated .npy header"},
      {"no_magic", "not a .npy file"},    {"bad_header", "unexpected key 'shapf'"},
      {"missing", "cannot open"}};
  for (const auto& [name, words] : cases) {
    const std::string path = dir.file(name + ".npy");
    const std::string e = error_of([&] { io::read_npy(path); });
    EXPECT_NE(e.find(path), std::string::npos) << name << ": " << e;
    EXPECT_NE(e.find(words), std::string::npos) << name << ": " << e;
  }
  EXPECT_NE(error_of([&] { io::read_npy(dir.file("big_endian.npy")); }).find("astype('<f4')"), std::string::npos);
  // The truncated file: both sizes are named (24 float32 = 96 bytes needed, 89 there).
  EXPECT_NE(
      error_of([&] { io::read_npy(dir.file("truncated.npy")); }).find("needs 96 bytes of data, the file holds 89"),
      std::string::npos);
}

TEST(Npy, HandMadeHeadersAreChecked) {
  auto npy = [](const std::string& dict, const std::string& data = "") {
    std::string h = dict;
    std::string b = std::string("\x93NUMPY\x01\x00", 8);
    b += static_cast<char>(h.size() & 0xff);
    b += static_cast<char>(h.size() >> 8);
    return b + h + data;
  };
  const std::string four(16, '\0');
  EXPECT_EQ(io::parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", four), "m").sizes().vec(),
            (std::vector<int64_t>{2, 2}));
  auto msg = [&](const std::string& bytes) { return error_of([&] { io::parse_npy(bytes, "'mem'"); }); };
  EXPECT_NE(msg(npy("{'descr': '<f4', 'shape': (2,), }")).find("lacks"), std::string::npos);
  EXPECT_NE(msg(npy("{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }")).find("True or False"),
            std::string::npos);
  EXPECT_NE(msg(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")).find("non-negative"),
            std::string::npos);
  EXPECT_NE(
      msg(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }")).find("too large"),
      std::string::npos);
  std::string v9 = npy("{}");
  v9[6] = 9;
  EXPECT_NE(msg(v9).find("version 9.0"), std::string::npos);
  // A uint64 value of 2^63 does not fit int64.
  std::string big(8, '\0');
  big[7] = '\x80';
  EXPECT_NE(msg(npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", big)).find("2^63"), std::string::npos);
}

}  // namespace torchfit::npy_test
