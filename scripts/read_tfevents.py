#!/usr/bin/env python3
"""Reads TensorBoard event files without TensorFlow or TensorBoard and prints their scalars as JSON.

    /usr/bin/python3 scripts/read_tfevents.py LOG_DIR     # {"train": {"epoch_loss": [[step, value], ...]}, ...}

Every record's framing is checked (uint64 length, masked CRC-32C of the length, payload, masked CRC-32C of
the payload; CRC-32C computed here bit by bit) and each tensorflow.Event is decoded with a small protocol
buffer reader of its own: wall_time (1), step (2), file_version (3), summary (5) → value (1) → tag (1),
simple_value (2) or tensor (8) → float_val (5) / double_val (6) / tensor_content (4), metadata (9) →
plugin_data (1) → plugin_name (1). Keys are the sub-folders of LOG_DIR ("." for files directly in it).
Exits 1 naming the file and offset on a bad CRC, a truncated record or a malformed protocol buffer.
"""
import json
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def fields(buf):
    """Yields (field number, wire type, value) of one protocol buffer message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("unsupported wire type %d" % wire)
        if i > len(buf):
            raise ValueError("truncated field %d" % field)
        yield field, wire, value


def tensor_value(buf):
    dtype = None
    for field, wire, value in fields(buf):
        if field == 1:
            dtype = value
        elif field == 5:  # float_val, packed or not
            return struct.unpack("<f", value[:4])[0] if wire == 2 else struct.unpack("<f", value)[0]
        elif field == 6:
            return struct.unpack("<d", value[:8])[0]
        elif field == 4:  # tensor_content
            return struct.unpack("<f" if dtype == 1 else "<d", value[:4 if dtype == 1 else 8])[0]
    raise ValueError("tensor without a value")


def summary_values(buf):
    for field, _, value in fields(buf):
        if field != 1:
            continue
        tag, number, plugin = None, None, None
        for f, wire, v in fields(value):
            if f == 1:
                tag = v.decode()
            elif f == 2 and wire == 5:
                number = struct.unpack("<f", v)[0]
            elif f == 8:
                number = tensor_value(v)
            elif f == 9:
                for g, _, pd in fields(v):
                    if g == 1:
                        plugin = dict((h, x) for h, _, x in fields(pd)).get(1, b"").decode()
        yield tag, number, plugin


def read_file(path):
    """[(step, wall_time, tag, value, plugin)] of one event file; checks framing and CRCs."""
    data = open(path, "rb").read()
    out, i, version = [], 0, None
    while i < len(data):
        if i + 12 > len(data):
            raise ValueError("%s: truncated record header at offset %d" % (path, i))
        header = data[i:i + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[i + 8:i + 12])
        if masked(header) != length_crc:
            raise ValueError("%s: bad length CRC at offset %d" % (path, i))
        payload = data[i + 12:i + 12 + length]
        if len(payload) != length or i + 16 + length > len(data):
            raise ValueError("%s: truncated record at offset %d" % (path, i))
        (payload_crc,) = struct.unpack("<I", data[i + 12 + length:i + 16 + length])
        if masked(payload) != payload_crc:
            raise ValueError("%s: bad data CRC at offset %d" % (path, i))
        wall, step = 0.0, 0
        for field, _, value in fields(payload):
            if field == 1:
                (wall,) = struct.unpack("<d", value)
            elif field == 2:
                step = value
            elif field == 3:
                version = value.decode()
            elif field == 5:
                for tag, number, plugin in summary_values(value):
                    out.append((step, wall, tag, number, plugin))
        i += 16 + length
    if version != "brain.Event:2":
        raise ValueError("%s: no file_version brain.Event:2 event" % path)
    return out


def read_dir(log_dir):
    result = {}
    for root, _, files in os.walk(log_dir):
        for name in sorted(files):
            if "tfevents" not in name:
                continue
            key = os.path.relpath(root, log_dir)
            for step, _, tag, value, plugin in read_file(os.path.join(root, name)):
                result.setdefault(key, {}).setdefault(tag, []).append([step, value, plugin])
    return result


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        print(json.dumps(read_dir(sys.argv[1]), indent=1))
    except (ValueError, OSError, struct.error) as e:
        print("read_tfevents: %s" % e, file=sys.stderr)
        sys.exit(1)
