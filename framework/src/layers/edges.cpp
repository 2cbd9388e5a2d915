#include <torchfit/layers/edges.h>

#include <stdexcept>

#include <torchfit/error.h>

namespace torchfit {

namespace {

bool int_list(const nlohmann::json& j, size_t n) {
  bool ok = j.is_array() && j.size() == n;
  for (size_t i = 0; ok && i < n; ++i) ok = j[i].is_number_integer();
  return ok;
}

// An int (every edge), for one axis [before, after], for several D ints (each axis's both ends) or D
// [before, after] pairs. False for another form.
template <size_t D>
bool read_edges(const nlohmann::json& j, Edges<D>& e) {
  if (j.is_number_integer()) {
    for (auto& a : e.axes) a = {j.get<int64_t>(), j.get<int64_t>()};
    return true;
  }
  if (D == 1 && int_list(j, 2)) {
    e.axes[0] = {j[0].get<int64_t>(), j[1].get<int64_t>()};
    return true;
  }
  if (D > 1 && int_list(j, D)) {
    for (size_t i = 0; i < D; ++i) e.axes[i] = {j[i].get<int64_t>(), j[i].get<int64_t>()};
    return true;
  }
  bool pairs = D > 1 && j.is_array() && j.size() == D;
  for (size_t i = 0; pairs && i < D; ++i) pairs = int_list(j[i], 2);
  if (!pairs) return false;
  for (size_t i = 0; i < D; ++i) e.axes[i] = {j[i][0].get<int64_t>(), j[i][1].get<int64_t>()};
  return true;
}

template <size_t D>
nlohmann::json edges_json(const Edges<D>& e) {
  if (D == 1) return nlohmann::json::array({e.axes[0][0], e.axes[0][1]});
  nlohmann::json j = nlohmann::json::array();
  for (const auto& a : e.axes) j.push_back({a[0], a[1]});
  return j;
}

}  // namespace

template <size_t D>
std::vector<int64_t> Edges<D>::flat() const {
  std::vector<int64_t> v;
  for (const auto& a : axes) v.insert(v.end(), a.begin(), a.end());
  return v;
}

template <size_t D>
std::string Edges<D>::text() const {
  std::string s;
  for (const auto& a : axes) {
    s += (s.empty() ? "(" : ", (") + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ")";
  }
  return D == 1 ? s : "(" + s + ")";
}

template <size_t D>
void Edges<D>::check_non_negative(const std::string& who, const std::string& what) const {
  for (const auto& a : axes) {
    if (a[0] < 0 || a[1] < 0) throw ConfigError(who + ": " + what + " must be >= 0, got " + text());
  }
}

template struct Edges<1>;
template struct Edges<2>;
template struct Edges<3>;

void to_json(nlohmann::json& j, const Edges1D& e) { j = edges_json(e); }
void to_json(nlohmann::json& j, const Edges2D& e) { j = edges_json(e); }
void to_json(nlohmann::json& j, const Edges3D& e) { j = edges_json(e); }

void from_json(const nlohmann::json& j, Edges1D& e) {
  if (!read_edges(j, e)) throw std::invalid_argument("expected an integer or [left, right]");
}
void from_json(const nlohmann::json& j, Edges2D& e) {
  if (!read_edges(j, e))
    throw std::invalid_argument("expected an integer, [rows, cols] or [[top, bottom], [left, right]]");
}
void from_json(const nlohmann::json& j, Edges3D& e) {
  if (!read_edges(j, e)) {
    throw std::invalid_argument("expected an integer, [depth, rows, cols] or [[d1, d2], [h1, h2], [w1, w2]]");
  }
}

}  // namespace torchfit
