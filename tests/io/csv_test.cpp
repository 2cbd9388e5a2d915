// io/csv: RFC 4180 reading (CRLF, quotes, byte-order mark, line numbers, malformed quoting) and writing
// (quoting only where needed, write → read round trip), and write failures on a real full or read-only
// file system.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/io/csv.h>

#include "support/temp_dir.h"
#include "support/tmpfs.h"

using namespace torchfit;
using io::CsvRow;

namespace {
std::string csv_file_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
std::string csv_error_of(const std::string& text) {
  try {
    io::parse_csv(text, "'t.csv'");
  } catch (const IoError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(Csv, ReadsCrlfQuotedCellsAndAByteOrderMarkWithTheLineOfEachRow) {
  const std::string text =
      "\xEF\xBB\xBF"
      "file,class\r\n"
      "a.png,Coat\r\n"
      "\r\n"
      "\"b,1.png\",\"say \"\"hi\"\"\"\r\n"
      "\"two\r\nlines.png\", Dress \r\n"
      "last.png,Bag";  // no line end at the end
  const std::vector<CsvRow> rows = io::parse_csv(text, "'t.csv'");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].cells, (std::vector<std::string>{"file", "class"}));
  EXPECT_EQ(rows[1].cells, (std::vector<std::string>{"a.png", "Coat"}));
  EXPECT_EQ(rows[2].cells, (std::vector<std::string>{"b,1.png", "say \"hi\""}));
  EXPECT_EQ(rows[3].cells, (std::vector<std::string>{"two\r\nlines.png", " Dress "})) << "spaces are data (RFC 4180)";
  EXPECT_EQ(rows[4].cells, (std::vector<std::string>{"last.png", "Bag"}));
  EXPECT_EQ((std::vector<int64_t>{rows[0].line, rows[1].line, rows[2].line, rows[3].line, rows[4].line}),
            (std::vector<int64_t>{1, 2, 4, 5, 7}));
  EXPECT_EQ(io::parse_csv("a;b\rc;d\r", "x", ';')[1].cells, (std::vector<std::string>{"c", "d"})) << "CR alone";
  EXPECT_TRUE(io::parse_csv("", "x").empty());
  EXPECT_EQ(io::csv_header_name("\xEF\xBB\xBF  filename \t"), "filename");
}

TEST(Csv, MalformedQuotingIsAnIoErrorNamingTheSourceAndLine) {
  EXPECT_EQ(csv_error_of("file,class\nok.png,Coat\n\"a\"b.png,Coat\n"),
            "'t.csv' line 3: malformed CSV (RFC 4180): a quote inside an unquoted field, or text after a "
            "closing quote");
  EXPECT_EQ(csv_error_of("file,class\r\na\"b.png,Coat\r\n"),
            "'t.csv' line 2: malformed CSV (RFC 4180): a quote inside an unquoted field, or text after a "
            "closing quote");
  EXPECT_EQ(csv_error_of("file,class\n\"open.png,Coat\n"),
            "'t.csv' line 2: malformed CSV (RFC 4180): the file ends inside a quoted field (a quote is never "
            "closed)");
  torchfit::testing::TempDir dir("csv_missing");
  try {
    io::read_csv(dir.file("none.csv"), ',', "labels file");
    FAIL() << "no error for a missing file";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot open labels file '" + dir.file("none.csv") + "': " + std::strerror(ENOENT));
  }
}

TEST(Csv, WrittenCellsSurviveAReadAndPlainCellsStayUnquoted) {
  torchfit::testing::TempDir dir("csv_roundtrip");
  const std::vector<std::vector<std::string>> rows = {{"file", "class", "probability"},
                                                      {"a,b.png", "Coat", "0.5"},
                                                      {"say \"hi\".png", "T-shirt/top", "1"},
                                                      {" padded.png ", "multi\nline", ""},
                                                      {"plain.png", "Bag", "1e-07"}};
  io::CsvWriter w;
  w.open(dir.file("p.csv"));
  for (const auto& r : rows) w.write_row(r);
  w.close();
  EXPECT_EQ(csv_file_text(dir.file("p.csv")),
            "file,class,probability\n\"a,b.png\",Coat,0.5\n\"say \"\"hi\"\".png\",T-shirt/top,1\n"
            "\" padded.png \",\"multi\nline\",\nplain.png,Bag,1e-07\n");
  const auto back = io::read_csv(dir.file("p.csv"));
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(back[i].cells, rows[i]) << "row " << i;
  EXPECT_EQ(io::csv_line({"a;b", "c,d"}, ';'), "\"a;b\";c,d\n") << "the separator decides what is quoted";
  w.open(dir.file("p.csv"), /*append=*/true);
  w.write_row({"more.png", "Coat", "0.25"});
  w.close();
  EXPECT_EQ(io::read_csv(dir.file("p.csv")).back().cells, (std::vector<std::string>{"more.png", "Coat", "0.25"}));
}

TEST(Csv, AFullFileSystemIsAnIoErrorNamingTheFileAndTheOsReason) {
  torchfit::testing::SmallFilesystem fs("64k");
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  const std::string path = fs.file("steps.csv");
  io::CsvWriter w;
  w.open(path);
  const std::vector<std::string> row(8, std::string(100, 'x'));
  std::string message;
  try {
    for (int i = 0; i < 1000; ++i) w.write_row(row);  // ~800 KB into 64 KiB
  } catch (const IoError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "cannot write '" + path + "': " + std::strerror(ENOSPC));
  w.close();

  // The atomic writer (predictions.csv): the error names the target, not the temporary, and no temporary
  // is left behind.
  const std::string target = fs.file("predictions.csv");
  try {
    io::write_text_atomically(target, std::string(200000, 'y'));
    FAIL() << "no error on a full disk";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + target + "': " + std::strerror(ENOSPC));
  }
  for (const auto& e : std::filesystem::directory_iterator(fs.path()))
    EXPECT_EQ(e.path().filename().string().find(".predictions.csv.tmp"), std::string::npos) << e.path();
}

TEST(Csv, AReadOnlyFileSystemIsAnIoErrorNamingTheFileAndTheOsReason) {
  torchfit::testing::SmallFilesystem fs("64k");
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  ASSERT_TRUE(fs.make_read_only());
  io::CsvWriter w;
  try {
    w.open(fs.file("epochs.csv"));
    FAIL() << "opened a file on a read-only file system";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot open '" + fs.file("epochs.csv") + "' for writing: " + std::strerror(EROFS));
  }
  EXPECT_THROW(io::write_text_atomically(fs.file("predictions.csv"), "file,class,probability\n"), IoError);
}
