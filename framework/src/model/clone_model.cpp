// clone_model and adapt_to_data (clone_model.h).
#include <torchfit/model/clone_model.h>

#include <algorithm>
#include <map>

#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>

namespace torchfit {
namespace {

std::shared_ptr<Layer> default_clone(const Layer& layer) {
  auto clone = layer_from_json({{"class_name", layer.class_name()}, {"config", layer.config()}});
  clone->set_name(layer.name());
  return clone;
}

// The clones of `model`'s layers, one per layer, made on first use.
struct Clones {
  std::function<std::shared_ptr<Layer>(const Layer&)> make;
  std::map<const Layer*, std::shared_ptr<Layer>> made;
  std::shared_ptr<Layer> of(const Layer& layer) {
    auto& clone = made[&layer];
    if (!clone) clone = make(layer);
    if (!clone) throw ConfigError("clone_model: the clone_function gave no layer for '" + layer.name() + "'");
    return clone;
  }
};

Model clone_sequential(const SequentialImpl& model, const Shape& input_shape, Clones& clones) {
  Sequential clone(model.model_name());
  bool first = true;
  for (const auto& layer : model.layers()) {
    auto copy = clones.of(*layer);
    if (first) copy->set_declared_input_shape(input_shape);
    first = false;
    clone->add(copy);
  }
  return clone;
}

// The graph again, nodes made in model_from_config's order: layers() in turn, each layer's calls as
// their inputs are made.
Model clone_graph(const ModelImpl& model, const std::vector<Shape>& shapes, Clones& clones) {
  std::map<const Node*, KerasTensor> made;
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const auto& in = model.inputs()[i];
    auto layer = std::dynamic_pointer_cast<InputLayerImpl>(in.layer());
    InputLayerOptions o = layer ? layer->options : InputLayerOptions().name(in.layer()->name());
    made[in.node().get()] = input_tensor_of(std::make_shared<InputLayerImpl>(o.input_shape(shapes[i])));
  }
  std::map<const Layer*, std::vector<const Node*>> calls;
  for (const auto& node : model.nodes()) calls[node->layer.get()].push_back(node.get());
  for (auto& [layer, list] : calls) {
    std::sort(list.begin(), list.end(), [](const Node* a, const Node* b) { return a->node_index < b->node_index; });
  }
  std::map<const Layer*, size_t> next;
  for (bool progress = true; progress;) {
    progress = false;
    for (const auto& layer : model.layers()) {
      const auto& list = calls[layer.get()];
      for (size_t& k = next[layer.get()]; k < list.size(); ++k) {
        std::vector<KerasTensor> xs;
        for (const auto& x : list[k]->inputs) {
          if (made.count(x.node().get())) xs.push_back(made.at(x.node().get()));
        }
        if (xs.size() != list[k]->inputs.size()) break;
        auto clone = clones.of(*layer);
        made[list[k]] = clone->takes_list() ? clone->call(xs) : clone->call(xs.at(0));
        progress = true;
      }
    }
  }
  std::vector<KerasTensor> inputs, outputs;
  for (const auto& in : model.inputs()) inputs.push_back(made.at(in.node().get()));
  for (const auto& out : model.outputs()) outputs.push_back(made.at(out.node().get()));
  Model clone(inputs, outputs, model.model_name());
  std::vector<std::string> order;
  for (const auto& l : model.layers()) order.push_back(l->name());
  clone->reorder_layers(order);
  return clone;
}

}  // namespace

Model clone_model(const ModelImpl& model, const CloneModelOptions& options) {
  std::vector<Shape> shapes = options.input_shapes();
  if (shapes.empty()) {
    for (const auto& in : model.inputs()) shapes.push_back(in.shape());
  }
  if (shapes.size() != model.inputs().size()) {
    throw ConfigError("clone_model: " + std::to_string(shapes.size()) + " input shapes for the " +
                      std::to_string(model.inputs().size()) + " inputs of '" + model.model_name() + "'");
  }
  Clones clones{options.clone_function() ? options.clone_function() : default_clone, {}};
  const auto* sequential = dynamic_cast<const SequentialImpl*>(&model);
  Model clone = sequential ? clone_sequential(*sequential, shapes[0], clones) : clone_graph(model, shapes, clones);
  clone->set_dtype_policy(model.dtype_policy());
  clone->set_memory_format(model.memory_format());
  return clone;
}

namespace {

std::string shape_json(const Shape& s) { return nlohmann::json(s).dump(); }

// With new weights: the input at the data's shape and the class-score Dense at `classes` units.
Model resized_architecture(const Model& model, const AdaptToDataOptions& o, std::vector<std::string>& changes) {
  const Shape input = o.input_shape().empty() ? model->input_shape() : o.input_shape();
  const auto node = class_scores_node(*model);
  const Layer* head = node ? node->layer.get() : nullptr;
  const auto* dense = dynamic_cast<const DenseImpl*>(head);
  const bool units_change = dense && o.classes() > 0 && dense->options.units() != o.classes();
  if (input == model->input_shape() && !units_change) return model;
  if (input != model->input_shape()) {
    changes.push_back(
        std::string(dynamic_cast<const SequentialImpl*>(model.get()) ? "input_shape " : "batch_input_shape ") +
        shape_json(model->input_shape()) + " -> " + shape_json(input));
  }
  if (units_change) {
    changes.push_back("last Dense layer '" + dense->name() + "' units " + std::to_string(dense->options.units()) +
                      " -> " + std::to_string(o.classes()) + " (classes in the training data)");
  }
  CloneModelOptions clone;
  clone.input_shapes({input});
  clone.clone_function([&](const Layer& layer) {
    if (&layer != head || !units_change) return default_clone(layer);
    nlohmann::json config = layer.config();
    config["units"] = o.classes();
    auto resized = layer_from_json({{"class_name", layer.class_name()}, {"config", config}});
    resized->set_name(layer.name());
    return resized;
  });
  return clone_model(*model, clone);
}

void check_single_io(const ModelImpl& model) {
  if (model.inputs().size() == 1 && model.outputs().size() == 1) return;
  throw ConfigError("'" + model.model_name() + "' has " + std::to_string(model.inputs().size()) + " inputs and " +
                    std::to_string(model.outputs().size()) +
                    " outputs; adapting a classifier to an image folder needs one input and one output");
}

}  // namespace

Model adapt_to_data(const Model& model, const AdaptToDataOptions& o, std::vector<std::string>* changes) {
  std::vector<std::string> said;
  check_single_io(*model);
  Model out = model;
  if (o.architecture_only()) {
    if (!class_scores_node(*model) && o.classes() > 0 && model->output_shape() != Shape{o.classes()}) {
      const auto& layer = model->outputs()[0].layer();
      throw ConfigError("no Dense layer to produce one output per class: the output layer '" + layer->name() + "' (" +
                        layer->class_name() + ") is not a Dense (or an Activation, Softmax or Dropout after one)");
    }
    out = resized_architecture(model, o, said);
  } else if (!o.input_shape().empty() && model->input_shape() != o.input_shape()) {
    throw ConfigError("the model takes inputs " + format_shape(model->input_shape()) + " and the data is " +
                      format_shape(o.input_shape()));
  }
  if (o.new_head()) {
    out = with_new_head(out, o.classes());
    said.push_back("the classification head is a new Dense(" + std::to_string(o.classes()) + ", softmax) 'new_head'");
  }
  if (o.classes() > 0 && out->output_shape() != Shape{o.classes()}) {
    throw ConfigError("the model outputs " + format_shape(out->output_shape()) + " and the data has " +
                      std::to_string(o.classes()) + " classes");
  }
  if (o.freeze_base()) {
    const int frozen = freeze_all_but_head(*out);
    said.push_back(std::to_string(frozen) + " layers frozen, " + std::to_string(out->trainable_params()) +
                   " trainable parameters left");
  }
  if (changes) changes->insert(changes->end(), said.begin(), said.end());
  return out;
}

}  // namespace torchfit
