#pragma once
/// @file class_weight.h
/// Class weights for fit(class_weight=…): scikit-learn's "balanced" weights and a JSON file of weights.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace torchfit {

/// sklearn.utils.class_weight.compute_class_weight("balanced"): n_samples / (n_classes · count(c)) for
/// each class c in [0, num_classes). `labels`: each sample's class index. Errors: ConfigError for a class
/// without samples (its weight would be infinite; scikit-learn refuses it too) or an index out of range.
std::map<int64_t, double> balanced_class_weight(const std::vector<int64_t>& labels, int64_t num_classes);

/// Reads a JSON object of weights keyed by class name or index ({"cat": 1.0, "dog": 3.5} or {"0": 1,
/// "1": 3.5}); `class_indices`: name → index. Every class must have a weight (as Keras requires keys 0 …
/// n − 1). Errors: ConfigError naming the file and the key: a directory, a file that cannot be opened
/// (with the OS reason), unreadable JSON, not an object, an unknown class, a weight outside [0, 1e6]
/// (larger ones overflow the float32 loss), a class named twice (by name and by index), every weight 0,
/// a missing class.
std::map<int64_t, double> read_class_weight(const std::string& path,
                                            const std::map<std::string, int64_t>& class_indices);

/// The class weights as Keras's fit(class_weight=…) spells them: "balanced" (balanced_class_weight over
/// `labels`, each sample's class index) or the path of a JSON file (read_class_weight with
/// `class_indices`). Errors: ConfigError for "" or a case-changed "balanced" that is no file ("Balanced":
/// neither balanced, lower case, nor a JSON file), and the errors of those two functions.
std::map<int64_t, double> class_weight_from_spec(const std::string& spec, const std::vector<int64_t>& labels,
                                                 const std::map<std::string, int64_t>& class_indices);

/// One weight per class index 0 … classes − 1 (what the weighted loss multiplies by), from Keras's
/// class_weight dict. Errors: ConfigError for a class without a weight, a weight that is negative or not
/// finite, or a class index outside [0, classes).
std::vector<double> class_weight_vector(const std::map<int64_t, double>& weights, int64_t classes);

}  // namespace torchfit
