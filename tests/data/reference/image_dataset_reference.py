"""Independent reference of Keras 3's image_dataset_from_directory, for tests/data/image_dataset_test.cpp.

Written from keras/src/utils/image_dataset_utils.py and keras/src/utils/dataset_utils.py (index_directory,
iter_valid_files, index_subdirectory, get_training_or_validation_split): os.walk, NumPy's legacy
RandomState(seed).shuffle of the paths and of the labels, the split; and TensorFlow's tf.image.resize
(half-pixel centres, no antialias; bilinear and nearest here, the other methods from
tests/layers/reference/tf_resize_reference.py, found at "tf_resize_dir") in NumPy float64, on images
decoded by Pillow.

Input (JSON `data`): {"directory", "labels": "inferred" | null | [ints], "class_names": null | [names],
"shuffle", "seed", "validation_split": null | v, "subset": null | "training" | "validation",
"image_size": [h, w], "interpolation", "crop_to_aspect_ratio", "color_mode", "pixels": number of files
(from the start of the result) whose resized pixels to return, or "pixel_indices": which files,
"make_tree": optional, builds the test folder first}. Output: {"file_paths", "labels", "class_names", "pixels": [HWC lists]}.
"""
import math
import os

import numpy as np

FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def iter_valid_files(directory, follow_links):
    walk = os.walk(directory, followlinks=follow_links)
    for root, _, files in sorted(walk, key=lambda x: x[0]):
        for fname in sorted(files):
            if fname.lower().endswith(FORMATS):
                yield root, fname


def index_subdirectory(directory, class_indices, follow_links):
    dirname = os.path.basename(directory)
    labels, filenames = [], []
    for root, fname in iter_valid_files(directory, follow_links):
        labels.append(class_indices[dirname])
        absolute_path = os.path.join(root, fname)
        filenames.append(os.path.join(dirname, os.path.relpath(absolute_path, directory)))
    return filenames, labels


def index_directory(directory, labels, class_names, shuffle, seed, follow_links):
    if labels == "inferred":
        subdirs = []
        for subdir in sorted(os.listdir(directory)):
            if os.path.isdir(os.path.join(directory, subdir)) and not subdir.startswith("."):
                subdirs.append(subdir)
        if class_names is not None:
            assert set(class_names).issubset(set(subdirs))
            subdirs = class_names
    else:
        subdirs = [""]
    class_names = subdirs
    class_indices = dict(zip(class_names, range(len(class_names))))
    filenames, labels_list = [], []
    for dirpath in (os.path.join(directory, s) for s in subdirs):
        f, l = index_subdirectory(dirpath, class_indices, follow_links)
        labels_list.append(l)
        filenames += f
    if labels == "inferred":
        i = 0
        labels = np.zeros((len(filenames),), dtype="int32")
        for partial in labels_list:
            labels[i:i + len(partial)] = partial
            i += len(partial)
    elif labels is None:
        class_names = None
    else:
        assert len(labels) == len(filenames), (len(labels), len(filenames))
        class_names = [str(label) for label in sorted(set(labels))]
        labels = np.array(labels, dtype="int64")
    file_paths = [os.path.join(directory, fname) for fname in filenames]
    if shuffle:
        rng = np.random.RandomState(seed)
        rng.shuffle(file_paths)
        if labels is not None:
            rng = np.random.RandomState(seed)
            rng.shuffle(labels)
    return file_paths, labels, class_names


def split(samples, labels, validation_split, subset):
    if not validation_split:
        return samples, labels
    num_val = int(validation_split * len(samples))
    if subset == "training":
        return samples[:-num_val], (labels[:-num_val] if labels is not None else None)
    return samples[-num_val:], (labels[-num_val:] if labels is not None else None)


def crop_box(h, w, th, tw):
    rows = min(h, int(float(w * th) / tw))
    cols = min(w, int(float(h * tw) / th))
    rows, cols = max(rows, 1), max(cols, 1)
    return (h - rows) // 2, (w - cols) // 2, rows, cols


def resize_axis_bilinear(in_size, out_size):
    scale = in_size / out_size
    idx0, idx1, lerp = [], [], []
    for i in range(out_size):
        x = (i + 0.5) * scale - 0.5  # TensorFlow's HalfPixelScaler
        f = math.floor(x)
        idx0.append(max(f, 0))
        idx1.append(min(math.ceil(x), in_size - 1))
        lerp.append(x - f)
    return np.array(idx0), np.array(idx1), np.array(lerp)


def tf_resize(img, th, tw, method):
    """tf.image.resize of an (H, W, C) array, float64."""
    h, w, _ = img.shape
    img = img.astype(np.float64)
    if method not in ("nearest", "bilinear"):  # bicubic, area, lanczos3/5, gaussian, mitchellcubic
        import sys
        sys.path.insert(0, data["tf_resize_dir"])
        from tf_resize_reference import resize_axis
        return resize_axis(resize_axis(img, 0, th, method, False), 1, tw, method, False)
    if method == "nearest":  # HalfPixelScalerForNN, floor, clamped
        rows = [min(math.floor((i + 0.5) * (h / th)), h - 1) for i in range(th)]
        cols = [min(math.floor((j + 0.5) * (w / tw)), w - 1) for j in range(tw)]
        return img[rows][:, cols]
    y0, y1, ly = resize_axis_bilinear(h, th)
    x0, x1, lx = resize_axis_bilinear(w, tw)
    top = img[y0][:, x0] + (img[y0][:, x1] - img[y0][:, x0]) * lx[None, :, None]
    bottom = img[y1][:, x0] + (img[y1][:, x1] - img[y1][:, x0]) * lx[None, :, None]
    return top + (bottom - top) * ly[:, None, None]


def load(path, color_mode):
    from PIL import Image
    img = Image.open(path)
    mode = {"rgb": "RGB", "grayscale": "L", "rgba": "RGBA"}[color_mode]
    arr = np.asarray(img.convert(mode))
    return arr[:, :, None] if arr.ndim == 2 else arr


def make_tree(root):
    """The small test folder: odd names, nested folders, hidden entries, other formats."""
    from PIL import Image
    rng = np.random.RandomState(7)

    def image(path, h, w, mode="RGB", fmt=None):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shape = (h, w) if mode == "L" else (h, w, 3)
        arr = rng.randint(0, 256, size=shape).astype(np.uint8)
        im = Image.fromarray(arr, "L" if mode == "L" else "RGB")
        if fmt == "GIF":
            im = im.convert("P", palette=Image.ADAPTIVE, colors=64)
        im.save(path, format=fmt)

    j = os.path.join
    image(j(root, "cats", "10.png"), 7, 9)
    image(j(root, "cats", "2.PNG"), 5, 5, fmt="PNG")
    image(j(root, "cats", "1.jpg"), 8, 8, fmt="JPEG")
    image(j(root, "cats", "Zed.bmp"), 6, 11, fmt="BMP")
    image(j(root, "cats", "anim.gif"), 9, 6, fmt="GIF")
    image(j(root, "cats", ".hidden.png"), 4, 4)
    image(j(root, "cats", "scan.tif"), 4, 4, fmt="TIFF")  # not an allowed format
    image(j(root, "cats", "sub", "a.png"), 12, 3)
    image(j(root, "cats", "sub-b", "b.png"), 3, 12, "L")
    image(j(root, "cats", "sub", "deeper", "c.jpeg"), 10, 10, fmt="JPEG")
    image(j(root, "cats", ".cache", "d.png"), 6, 6)
    open(j(root, "cats", "notes.txt"), "w").write("not an image")
    for i in range(7):
        image(j(root, "dogs", "dog_%d.png" % i), 5 + i, 13 - i, "L" if i % 2 else "RGB")
    image(j(root, "Birds", "x.png"), 8, 6)
    image(j(root, "Birds", "y.png"), 6, 8, "L")
    image(j(root, "Birds", "w", "z.png"), 16, 16)
    image(j(root, ".git", "objects.png"), 4, 4)  # hidden class folder: not a class
    image(j(root, "top.png"), 5, 6)  # outside the classes: only indexed without inferred labels
    os.makedirs(j(root, "empty_class"), exist_ok=True)


if "make_tree" in data:
    make_tree(data["make_tree"])

paths, labels, names = index_directory(data["directory"], data["labels"], data.get("class_names"),
                                       data["shuffle"], data["seed"], data.get("follow_links", False))
paths, labels = split(paths, labels, data.get("validation_split"), data.get("subset"))
pixels = []
th, tw = data["image_size"]
for p in [paths[i] for i in data.get("pixel_indices", range(min(data.get("pixels", 0), len(paths))))]:
    img = load(p, data.get("color_mode", "rgb"))
    if data.get("crop_to_aspect_ratio"):
        t, l, r, c = crop_box(img.shape[0], img.shape[1], th, tw)
        img = img[t:t + r, l:l + c]
    pixels.append(tf_resize(img, th, tw, data.get("interpolation", "bilinear")).reshape(-1).tolist())
out = {"file_paths": list(paths), "labels": None if labels is None else [int(v) for v in labels],
       "class_names": names, "pixels": pixels}
