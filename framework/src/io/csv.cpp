#include <torchfit/io/csv.h>

#include <csv.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <torchfit/error.h>

namespace torchfit::io {
namespace {

constexpr char kBom[] = "\xEF\xBB\xBF";

// libcsv's callbacks collect cells and records; `line` is the line being fed to the parser, `row_line`
// the line on which the record being parsed began.
struct CsvParseState {
  std::vector<CsvRow> rows;
  std::vector<std::string> cells;
  int64_t line = 1, row_line = 1;
};

void on_csv_field(void* text, size_t n, void* data) {
  auto* s = static_cast<CsvParseState*>(data);
  s->cells.emplace_back(text ? static_cast<const char*>(text) : "", text ? n : 0);
}

void on_csv_record(int, void* data) {
  auto* s = static_cast<CsvParseState*>(data);
  s->rows.push_back({std::move(s->cells), s->row_line});
  s->cells.clear();
}

// End of the physical line that starts at `from`: just past its CRLF, LF or lone CR (or the end).
size_t csv_line_end(const std::string& text, size_t from) {
  const size_t i = text.find_first_of("\r\n", from);
  if (i == std::string::npos) return text.size();
  return text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? i + 2 : i + 1;
}

[[noreturn]] void malformed(const std::string& source, int64_t line, const std::string& what) {
  throw IoError(source + " line " + std::to_string(line) + ": malformed CSV (RFC 4180): " + what);
}

bool needs_quotes(const std::string& cell, char separator) {
  if (cell.empty()) return false;
  if (cell.find_first_of(std::string("\"\r\n") + separator) != std::string::npos) return true;
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  return blank(cell.front()) || blank(cell.back());
}

}  // namespace

std::vector<CsvRow> parse_csv(const std::string& text, const std::string& source, char separator) {
  csv_parser p;
  if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
    throw IoError(source + ": cannot start the CSV parser (out of memory)");
  }
  std::unique_ptr<csv_parser, void (*)(csv_parser*)> guard(&p, csv_free);
  csv_set_delim(&p, static_cast<unsigned char>(separator));
  csv_set_space_func(&p, [](unsigned char) { return 0; });  // RFC 4180: spaces are part of a field
  CsvParseState s;
  size_t pos = text.compare(0, 3, kBom) == 0 ? 3 : 0;
  // Fed one physical line at a time so that the state knows the line of each record and error.
  for (; pos < text.size(); ++s.line) {
    const size_t end = csv_line_end(text, pos);
    if (p.pstate == 0) s.row_line = s.line;  // libcsv's ROW_NOT_BEGUN: a record may start on this line
    if (csv_parse(&p, text.data() + pos, end - pos, on_csv_field, on_csv_record, &s) != end - pos) {
      if (csv_error(&p) == CSV_EPARSE) {
        malformed(source, s.line, "a quote inside an unquoted field, or text after a closing quote");
      }
      throw IoError(source + " line " + std::to_string(s.line) + ": " + csv_strerror(csv_error(&p)));
    }
    pos = end;
  }
  if (csv_fini(&p, on_csv_field, on_csv_record, &s) != 0) {
    malformed(source, s.line - 1, "the file ends inside a quoted field (a quote is never closed)");
  }
  return std::move(s.rows);
}

std::vector<CsvRow> read_csv(const std::string& path, char separator, const std::string& what) {
  const std::string named = (what.empty() ? "" : what + " ") + "'" + path + "'";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw IoError("cannot open " + named + ": " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) throw IoError("cannot read " + named + ": " + std::strerror(err));
  return parse_csv(text, named, separator);
}

std::string csv_line(const std::vector<std::string>& cells, char separator) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += separator;
    const std::string& c = cells[i];
    if (!needs_quotes(c, separator)) {
      out += c;
      continue;
    }
    std::string quoted(2 * c.size() + 2, '\0');  // every quote doubled, plus the two around
    quoted.resize(csv_write2(quoted.data(), quoted.size(), c.data(), c.size(), '"'));
    out += quoted;
  }
  return out + "\n";
}

std::string csv_header_name(const std::string& cell) {
  std::string s = cell.compare(0, 3, kBom) == 0 ? cell.substr(3) : cell;
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

CsvWriter::~CsvWriter() {
  if (file_) std::fclose(file_);
}

void CsvWriter::open(const std::string& path, bool append, char separator) {
  if (file_) close();
  path_ = path;
  separator_ = separator;
  file_ = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (!file_) throw IoError("cannot open '" + path + "' for writing: " + std::strerror(errno));
}

void CsvWriter::write_row(const std::vector<std::string>& cells) {
  if (!file_) throw IoError("cannot write '" + path_ + "': the file is not open");
  const std::string line = csv_line(cells, separator_);
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    const int err = errno;
    std::clearerr(file_);
    throw IoError("cannot write '" + path_ + "': " + std::strerror(err ? err : EIO));
  }
}

void CsvWriter::close() {
  if (!file_) return;
  std::FILE* f = file_;
  file_ = nullptr;
  errno = 0;
  if (std::fclose(f) != 0) throw IoError("cannot close '" + path_ + "': " + std::strerror(errno ? errno : EIO));
}

}  // namespace torchfit::io
