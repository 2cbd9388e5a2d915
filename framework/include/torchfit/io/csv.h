#pragma once
/// @file csv.h
/// CSV reading and writing through libcsv (RFC 4180): every CSV file torchfit reads or writes goes
/// through these functions, so quoting, line ends and errors are the same everywhere.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace torchfit::io {

/// One record of a CSV file: its cells (quotes removed, "" turned into ") and the 1-based line of the
/// file on which it starts (what an editor shows; a quoted cell with line breaks spans several lines).
struct CsvRow {
  std::vector<std::string> cells;
  int64_t line = 0;
};

/// Parses CSV text as RFC 4180 (libcsv, strict mode): fields separated by `separator` (default ','),
/// records ended by CRLF, LF or CR, fields optionally quoted with '"' (a quoted field may hold the
/// separator, line breaks and "" for a quote). A UTF-8 byte-order mark at the start is dropped and blank
/// lines are skipped; every field is taken byte for byte as RFC 4180 gives it — spaces and tabs around an
/// unquoted field are part of it (as Python's csv module reads and writes them), and a space between a
/// quote and the separator is malformed.
/// `source` names the text in errors (usually its file).
/// Errors: torchfit::IoError "<source> line N: malformed CSV (RFC 4180): …" for a quote inside an
/// unquoted field, text after a closing quote, or a quoted field that is never closed.
std::vector<CsvRow> parse_csv(const std::string& text, const std::string& source, char separator = ',');

/// Reads and parses the file `path` as parse_csv. `what` (e.g. "labels file") names the kind of file
/// in messages: "labels file 'x.csv' line 3: malformed CSV …".
/// Errors: torchfit::IoError naming the file and the OS reason when it cannot be read; parse_csv's.
std::vector<CsvRow> read_csv(const std::string& path, char separator = ',', const std::string& what = "");

/// One CSV record as text ending in "\n" (LF, not RFC 4180's CRLF; every RFC 4180 reader accepts both).
/// A cell is quoted (by libcsv's csv_write2: "…" with inner quotes doubled) only when it holds the
/// separator, a quote, a CR or LF, or starts or ends with a space or tab; other cells are written as
/// they are, so plain headers and numbers read `epoch,loss,0.5`.
std::string csv_line(const std::vector<std::string>& cells, char separator = ',');

/// Strips a leading UTF-8 byte-order mark and surrounding spaces/tabs from a header cell (for matching
/// column names written by spreadsheets).
std::string csv_header_name(const std::string& cell);

/// A CSV file written row by row (logs: steps.csv, epochs.csv, CSVLogger). Each row is formatted by
/// csv_line, written and flushed to the OS at once, so a reader sees whole rows while training runs.
/// Errors (all torchfit::IoError naming the file and the OS reason from strerror(errno), e.g. "No space
/// left on device", "Read-only file system"): open(), write_row() and close() when the OS refuses.
/// The destructor closes without throwing (call close() to learn of a failure).
class CsvWriter {
 public:
  CsvWriter() = default;
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  /// Opens `path` for writing: replaced (default) or appended to (`append`). Closes a file already open.
  void open(const std::string& path, bool append = false, char separator = ',');
  /// Writes one record (csv_line) and flushes it.
  void write_row(const std::vector<std::string>& cells);
  /// Flushes and closes the file; does nothing when none is open.
  void close();
  bool is_open() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  char separator_ = ',';
};

}  // namespace torchfit::io
