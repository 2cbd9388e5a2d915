# Keras 3's timeseries_dataset_from_array (keras/src/utils/timeseries_dataset_utils.py, 3.15.1 = the 3.16
# dev tree) in NumPy, for tests/data/timeseries_test.cpp: the argument checks with Keras's messages, the
# start positions (np.arange, then np.random.RandomState(seed).shuffle), and the windows as Keras's
# sequences_from_indices gathers them from data[start_index:end_index] (tf.range(p, p + L * r, r)) with the
# targets gathered from targets[start_index:end_index] at p. Keras's later tf.data shuffle buffer is not
# modelled (TensorFlow's generator). Run by run_python: `data` is the input JSON, `out` the answer:
#   data = {"cases": [{"data": [...], "targets": [...] | null, "sequence_length", "sequence_stride",
#            "sampling_rate", "shuffle", "seed", "start_index", "end_index"}, ...]}
#   out  = [{"x": [...], "y": [...] | null, "starts": [...]} | {"error": "..."}, ...]
import numpy as np


def check(data, start_index, end_index, sampling_rate, sequence_stride):
    # Keras's checks, verbatim in order and wording (note the truthiness tests: 0 skips them).
    if start_index:
        if start_index < 0:
            raise ValueError("`start_index` must be 0 or greater. Received: "
                             f"start_index={start_index}")
        if start_index >= len(data):
            raise ValueError("`start_index` must be lower than the length of the "
                             f"data. Received: start_index={start_index}, for data "
                             f"of length {len(data)}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. "
                             f"Received: start_index={start_index}, and "
                             f"end_index={end_index} ")
        if end_index >= len(data):
            raise ValueError("`end_index` must be lower than the length of the "
                             f"data. Received: end_index={end_index}, for data of "
                             f"length {len(data)}")
        if end_index <= 0:
            raise ValueError("`end_index` must be higher than 0. "
                             f"Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= len(data):
            raise ValueError(f"`{name}` must be lower than the length of the "
                             f"data. Received: {name}={value}, for "
                             f"data of length {len(data)}")


def windows(c):
    arr = np.asarray(c["data"], dtype=np.float64)
    targets = None if c["targets"] is None else np.asarray(c["targets"], dtype=np.float64)
    L, s, r = c["sequence_length"], c["sequence_stride"], c["sampling_rate"]
    start_index, end_index = c["start_index"], c["end_index"]
    check(arr, start_index, end_index, r, s)
    if start_index is None:
        start_index = 0
    if end_index is None:
        end_index = len(arr)
    num_seqs = end_index - start_index - (L - 1) * r
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    start_positions = np.arange(0, num_seqs, s, dtype="int32")
    if c["shuffle"]:
        rng = np.random.RandomState(c["seed"])
        rng.shuffle(start_positions)
    steps = arr[start_index:end_index]
    x = [steps[np.arange(p, p + L * r, r)] for p in start_positions]
    res = {"x": np.asarray(x).tolist(), "starts": (start_positions + start_index).tolist(), "y": None}
    if targets is not None:
        res["y"] = [targets[start_index:end_index][p].tolist() for p in start_positions]
    return res


out = []
for case in data["cases"]:
    try:
        out.append(windows(case))
    except ValueError as e:
        out.append({"error": str(e)})
