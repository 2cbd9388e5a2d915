"""Whether Keras 3 accepts an image augmentation layer's arguments: its constructors' checks, written from Keras
3's source (keras/src/layers/preprocessing/image_preprocessing/*.py), not from torchfit's code;
keras_layers_reference.py hands it the "augment_arguments" requests.

Request: {"op": "augment_arguments", "cases": [{"class_name": ..., "config": {...}}, ...]}; result: one number a
case, 1 where Keras builds the layer (and its first call raises nothing about these arguments), 0 where it
raises.

Sources (the checks, in the order Keras makes them):
- BaseImagePreprocessingLayer._set_factor: a list or tuple of exactly two, refused when factor[0] > upper bound
  or factor[1] < lower bound (so a pair need only overlap the bounds), sorted; a number must lie in the bounds.
  _FACTOR_BOUNDS: (-1, 1) by default; (0, 1) for RandomHue, RandomContrast, RandomSharpness, RandomErasing,
  CutMix, RandAugment; (1, 8) for RandomPosterization. RandomErasing._set_factor_by_name checks `scale` the
  same way.
- _set_value_range (AutoContrast, Equalization, Solarization, RandomPosterization, RandomSaturation,
  RandomColorDegeneration, RandomSharpness, RandomBrightness): a list or tuple of two, sorted; nothing else.
  RandomHue, RandomContrast, RandomErasing, RandomColorJitter and RandAugment store value_range unchecked.
- Solarization._set_factor and RandomShear._set_factor_with_name: a number or each end of a pair in [0, 1].
  RandomTranslation._set_factor: each in [-1, 1]. RandomShear, RandomTranslation, RandomRotation: interpolation
  in ("nearest", "bilinear").
- RandomGrayscale: 0 <= factor <= 1. MixUp: alpha unchecked. Equalization: bins unchecked.
- RandomColorJitter: builds RandomBrightness, RandomContrast, RandomSaturation, RandomHue for each factor given,
  with its value_range.
- RandAugment: _set_factor (0, 1), then RandomShear(x_factor = y_factor = the sorted pair, interpolation),
  RandomTranslation, RandomRotation, RandomBrightness, RandomColorDegeneration, RandomContrast, RandomSharpness
  (factor the pair, value_range), Solarization(both factors the pair), RandomPosterization(max(1,
  int(8 * upper))), AutoContrast, Equalization (value_range). num_ops is unchecked; a negative one fails in
  random.randint((num_ops,), ...) at the first call.
- RandomErasing's fill_value is checked at the first call: None, a number, or a list or tuple of three.
"""


class Refused(Exception):
    pass


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def set_factor(factor, bounds):
    lo, hi = bounds
    if isinstance(factor, (list, tuple)):
        if len(factor) != 2 or factor[0] > hi or factor[1] < lo:
            raise Refused()
        return sorted(factor)
    if is_number(factor):
        if factor < lo or factor > hi:
            raise Refused()
        return [max(-abs(factor), lo), abs(factor)]
    raise Refused()


def set_factor_each_end(factor, lo, hi):
    """Solarization._set_factor, RandomShear._set_factor_with_name, RandomTranslation._set_factor."""
    ends = factor if isinstance(factor, (list, tuple)) else [factor]
    if isinstance(factor, (list, tuple)) and len(factor) != 2:
        raise Refused()
    for v in ends:
        if not is_number(v) or v < lo or v > hi:
            raise Refused()


def set_value_range(value_range):
    if not isinstance(value_range, (list, tuple)) or len(value_range) != 2:
        raise Refused()


def interpolation(name):
    if name not in ("nearest", "bilinear"):
        raise Refused()


DEFAULT_RANGE = [0, 255]


def brightness(c):
    set_factor(c["factor"], (-1, 1))
    set_value_range(c.get("value_range", DEFAULT_RANGE))


def contrast(c):
    set_factor(c["factor"], (0, 1))


def saturation(c):
    set_factor(c["factor"], (-1, 1))
    set_value_range(c.get("value_range", DEFAULT_RANGE))


def hue(c):
    set_factor(c["factor"], (0, 1))


def color_jitter(c):
    value_range = c.get("value_range", DEFAULT_RANGE)
    for key, check in (("brightness_factor", brightness), ("contrast_factor", contrast),
                       ("saturation_factor", saturation), ("hue_factor", hue)):
        if c.get(key) is not None:
            check({"factor": c[key], "value_range": value_range})


def solarization(c):
    set_factor_each_end(c.get("addition_factor", 0.0), 0, 1)
    set_factor_each_end(c.get("threshold_factor", 0.0), 0, 1)
    set_value_range(c.get("value_range", DEFAULT_RANGE))


def erasing(c):
    set_factor(c.get("factor", 1.0), (0, 1))
    set_factor(c.get("scale", [0.02, 0.33]), (0, 1))
    fill = c.get("fill_value")
    if fill is not None and not is_number(fill) and not (isinstance(fill, (list, tuple)) and len(fill) == 3):
        raise Refused()


def grayscale(c):
    f = c.get("factor", 0.5)
    if f < 0 or f > 1:
        raise Refused()


def rand_augment(c):
    lower, upper = set_factor(c.get("factor", 0.5), (0, 1))
    pair = [lower, upper]
    value_range = c.get("value_range", DEFAULT_RANGE)
    set_factor_each_end(pair, 0, 1)  # RandomShear
    interpolation(c.get("interpolation", "bilinear"))
    set_factor_each_end(pair, -1, 1)  # RandomTranslation
    set_factor(pair, (-1, 1))  # RandomRotation
    brightness({"factor": pair, "value_range": value_range})
    set_factor(pair, (-1, 1))  # RandomColorDegeneration
    set_value_range(value_range)
    contrast({"factor": pair})
    set_factor(pair, (0, 1))  # RandomSharpness
    solarization({"addition_factor": pair, "threshold_factor": pair, "value_range": value_range})
    set_factor(max(1, int(8 * upper)), (1, 8))  # RandomPosterization
    if c.get("num_ops", 2) < 0:  # random.randint((num_ops,), ...) at the first call
        raise Refused()


CHECKS = {
    "AutoContrast": lambda c: set_value_range(c.get("value_range", DEFAULT_RANGE)),
    "Equalization": lambda c: set_value_range(c.get("value_range", DEFAULT_RANGE)),
    "Solarization": solarization,
    "RandomPosterization": lambda c: (set_factor(c["factor"], (1, 8)),
                                      set_value_range(c.get("value_range", DEFAULT_RANGE))),
    "RandomHue": hue,
    "RandomSaturation": saturation,
    "RandomColorJitter": color_jitter,
    "RandomColorDegeneration": lambda c: (set_factor(c["factor"], (-1, 1)),
                                          set_value_range(c.get("value_range", DEFAULT_RANGE))),
    "RandomSharpness": lambda c: (set_factor(c["factor"], (0, 1)),
                                  set_value_range(c.get("value_range", DEFAULT_RANGE))),
    "RandomErasing": erasing,
    "MixUp": lambda c: None,
    "CutMix": lambda c: set_factor(c.get("factor", 1.0), (0, 1)),
    "RandAugment": rand_augment,
    "RandomBrightness": brightness,
    "RandomContrast": contrast,
    "RandomGrayscale": grayscale,
}


def keras_accepts(case):
    try:
        CHECKS[case["class_name"]](case["config"])
    except Refused:
        return 0.0
    return 1.0


def run_arguments(req):
    return [keras_accepts(case) for case in req["cases"]]
