#pragma once
/// @file keras_call.h
/// How a multi-input layer's Keras call names its tensors and flags, for the Keras model readers and
/// writers (keras/keras_json.h, keras/keras_save.h): a layer whose Keras call is not one tensor or one
/// list of tensors derives from KerasCallArguments too (the attention layers).
#include <string>
#include <vector>

namespace torchfit {

/// A layer's Keras call signature beyond its inputs' list. MultiHeadAttention(query, value, key,
/// use_causal_mask=…) is called in Keras 3's JSON as {"args": [query], "kwargs": {"value": …, "key": …,
/// "use_causal_mask": true}} and in tf.keras 2's as [[query, 0, 0, {"value": [v, 0, 0], …}]]; torchfit's
/// graph holds the inputs as the list [query, value, key] and the flag in the layer's config.
class KerasCallArguments {
 public:
  virtual ~KerasCallArguments() = default;
  /// Keras's argument names of the inputs 0, 1, 2, …, input 0 passed positionally and the others by keyword:
  /// {"query", "value", "key"} for MultiHeadAttention (Keras 3 builds it by them: build(query_shape,
  /// value_shape, key_shape)). Empty: Keras passes the whole list as the first argument (Attention([q, v, k])).
  virtual std::vector<std::string> keras_call_keywords() const = 0;
  /// Keras call arguments the layer holds in its config ({"use_causal_mask"}): a Keras node's kwargs set
  /// them, the writers move them from the config back into the node's kwargs (when true).
  virtual std::vector<std::string> keras_call_flags() const = 0;
};

}  // namespace torchfit
