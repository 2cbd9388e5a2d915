#include <torchfit/layers/edges2d.h>

#include <stdexcept>

#include <torchfit/error.h>

namespace torchfit {

namespace {
std::string edges_text(const Edges2D& e) {
  return "((" + std::to_string(e.top) + ", " + std::to_string(e.bottom) + "), (" + std::to_string(e.left) + ", " +
         std::to_string(e.right) + "))";
}
bool int_pair(const nlohmann::json& j) {
  return j.is_array() && j.size() == 2 && j[0].is_number_integer() && j[1].is_number_integer();
}
}  // namespace

void Edges2D::check_non_negative(const std::string& who, const std::string& what) const {
  if (top < 0 || bottom < 0 || left < 0 || right < 0) {
    throw ConfigError(who + ": " + what + " must be >= 0, got " + edges_text(*this));
  }
}

void to_json(nlohmann::json& j, const Edges2D& e) { j = nlohmann::json::array({{e.top, e.bottom}, {e.left, e.right}}); }

void from_json(const nlohmann::json& j, Edges2D& e) {
  if (j.is_number_integer()) {
    e = Edges2D(j.get<int64_t>());
  } else if (int_pair(j)) {
    e = Edges2D(j[0].get<int64_t>(), j[1].get<int64_t>());
  } else if (j.is_array() && j.size() == 2 && int_pair(j[0]) && int_pair(j[1])) {
    e = Edges2D(j[0][0].get<int64_t>(), j[0][1].get<int64_t>(), j[1][0].get<int64_t>(), j[1][1].get<int64_t>());
  } else {
    throw std::invalid_argument("expected an integer, [rows, cols] or [[top, bottom], [left, right]]");
  }
}

}  // namespace torchfit
