"""Float64 NumPy references of Keras 3's attention layers, written from Keras 3's source (not from torchfit's
code); keras_layers_reference.py hands it the "attention_*" requests.

Sources (keras/src/layers/attention/):
- multi_head_attention.py: the projections are EinsumDense "abc,cde->abde" (query, key, value; bias "de")
  and "abcd,cde->abe" (attention_output; bias "e"); the query is multiplied by 1/sqrt(key_dim); scores
  einsum("aecd,abcd->acbe", key, query) (_build_attention_equation for rank 4, attention axis 1);
  _compute_causal_mask: row index >= column index; Softmax with a mask (keras/src/layers/activations/
  softmax.py): masked scores replaced by -1e9, softmax over the last axis, masked outputs set to 0; then
  einsum("acbe,aecd->abcd", scores, value) and the output projection. attention_mask (N, T, S) and the
  causal mask combined with a logical and (_compute_attention_mask).
- attention.py: _calculate_scores: "dot" matmul(query, key^T) * scale; "concat" concat_score_weight *
  sum(tanh(scale * (query[:, :, None] + key[:, None])), -1); _apply_scores: scores - 1e9 where the
  scores mask (value mask (N, 1, S) and the causal mask) is false, softmax over the last axis, matmul with
  value; the query mask zeroes the output's steps.
- additive_attention.py: scores = sum(scale * tanh(query[:, :, None] + key[:, None]), -1).
- grouped_query_attention.py (keras.layers.GroupQueryAttention): EinsumDense "bqm,muh->bquh" (query, bias
  "uh"), "bkm,mvh->bkvh" (key and value, bias "vh"), "bquh,uhm->bqm" (attention_output, bias "m"); key and
  value ops.repeat(..., num_query_heads // num_key_value_heads, axis=2) (NumPy's repeat: each key/value head
  repeated in place, head j serving query heads j*r ... j*r + r - 1); the query multiplied by
  1/sqrt(head_dim); scores einsum("bquh,bkuh->buqk"); _compute_attention_mask: query_mask (N, T, 1) &
  value_mask (N, 1, S) & key_mask (N, 1, S) & the causal mask, then & attention_mask; _masked_softmax
  expands the mask at the heads' axis (Softmax with a mask as above); einsum("buqk,bkuh->bquh").

Requests: {"op": "attention_mha", "x" (query, (N, T, d)), "value", optional "key", "query_kernel",
"query_bias", "key_kernel", "key_bias", "value_kernel", "value_bias", "output_kernel", "output_bias" (Keras
shapes; biases optional), "key_dim", "use_causal_mask", optional "attention_mask"}; {"op": "attention_gqa", the
same tensors and weights (Keras's GroupQueryAttention shapes), "num_query_heads", "num_key_value_heads",
"head_dim", "use_causal_mask", optional "attention_mask", "query_mask", "value_mask", "key_mask" (nonzero =
kept), optional "return": "scores" (the probabilities (N, num_query_heads, T, S) instead of the output)};
{"op": "attention_dot" |
"attention_concat" | "attention_additive", "x", "value", optional "key", optional "scale",
"concat_score_weight", "use_causal_mask", optional "query_mask", "value_mask"}. Sequences as torchfit holds
them, Keras's order (N, steps, features).
"""
import numpy as np


def _tensor(t):
    if t is None or isinstance(t, np.ndarray):
        return t
    return np.array(t["data"], dtype=np.float64).reshape(t["shape"])


def causal_mask(t, s):
    ones = np.ones((1, t, s), dtype=np.int64)
    return np.cumsum(ones, axis=-2) >= np.cumsum(ones, axis=-1)  # Keras's _compute_causal_mask


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def einsum_dense(equation, x, kernel, bias):
    y = np.einsum(equation, x, kernel)
    return y if bias is None else y + bias


def mha(req, get):
    query, value = get("x"), get("value")
    key = get("key") if req.get("key") is not None else value
    q = einsum_dense("abc,cde->abde", query, get("query_kernel"), get("query_bias"))
    k = einsum_dense("abc,cde->abde", key, get("key_kernel"), get("key_bias"))
    v = einsum_dense("abc,cde->abde", value, get("value_kernel"), get("value_bias"))
    q = q * (1.0 / np.sqrt(float(req["key_dim"])))
    scores = np.einsum("aecd,abcd->acbe", k, q)
    mask = None
    if req.get("attention_mask") is not None:
        mask = get("attention_mask") != 0
    if req.get("use_causal_mask"):
        c = causal_mask(query.shape[1], value.shape[1])
        mask = c if mask is None else np.logical_and(mask, c)
    if mask is not None:
        m = mask[:, None] if mask.ndim == 3 else mask  # expand at the heads' axis
        scores = np.where(m, scores, -1e9)
        scores = np.where(m, softmax(scores), 0.0)
    else:
        scores = softmax(scores)
    o = np.einsum("acbe,aecd->abcd", scores, v)
    return einsum_dense("abcd,cde->abe", o, get("output_kernel"), get("output_bias"))


def gqa(req, get):
    query, value = get("x"), get("value")
    key = get("key") if req.get("key") is not None else value
    repeats = req["num_query_heads"] // req["num_key_value_heads"]
    q = einsum_dense("bqm,muh->bquh", query, get("query_kernel"), get("query_bias"))
    k = einsum_dense("bkm,mvh->bkvh", key, get("key_kernel"), get("key_bias"))
    v = einsum_dense("bkm,mvh->bkvh", value, get("value_kernel"), get("value_bias"))
    k = np.repeat(k, repeats, axis=2)  # ops.repeat: (N, S, num_query_heads, head_dim)
    v = np.repeat(v, repeats, axis=2)
    t, s = query.shape[1], value.shape[1]
    mask = None
    for name, expand in (("query_mask", -1), ("value_mask", -2), ("key_mask", -2)):
        if req.get(name) is not None:
            m = np.expand_dims(get(name) != 0, expand)
            mask = m if mask is None else mask & m
    if req.get("use_causal_mask"):
        c = causal_mask(t, s)
        mask = c if mask is None else mask & c
    if req.get("attention_mask") is not None:
        given = get("attention_mask") != 0
        mask = given if mask is None else given & mask
    q = q * (1.0 / np.sqrt(float(req["head_dim"])))
    scores = np.einsum("bquh,bkuh->buqk", q, k)
    if mask is not None:
        m = np.broadcast_to(mask, (query.shape[0], t, s) if mask.ndim == 3 else (t, s))
        m = m[:, None] if m.ndim == 3 else m  # expanded at the heads' axis
        scores = np.where(m, scores, -1e9)
        scores = np.where(m, softmax(scores), 0.0)
    else:
        scores = softmax(scores)
    if req.get("return") == "scores":
        return scores
    o = np.einsum("buqk,bkuh->bquh", scores, v)
    return einsum_dense("bquh,uhm->bqm", o, get("output_kernel"), get("output_bias"))


def dense_attention(req, get):
    op = req["op"]
    query, value = get("x"), get("value")
    key = get("key") if req.get("key") is not None else value
    scale = get("scale") if req.get("scale") is not None else None
    if op == "attention_dot":
        scores = np.matmul(query, np.swapaxes(key, -2, -1))
        if scale is not None:
            scores = scores * scale
    else:
        pair = query[:, :, None, :] + key[:, None, :, :]
        if op == "attention_concat":
            inner = np.tanh(scale * pair) if scale is not None else np.tanh(pair)
            scores = get("concat_score_weight") * inner.sum(-1)
        else:
            scores = ((scale if scale is not None else 1.0) * np.tanh(pair)).sum(-1)
    t, s = query.shape[1], value.shape[1]
    keep = None
    if req.get("value_mask") is not None:
        keep = (get("value_mask") != 0)[:, None, :]
    if req.get("use_causal_mask"):
        c = causal_mask(t, s)
        keep = c if keep is None else np.logical_and(keep, c)
    if keep is not None:
        scores = np.where(np.logical_not(keep), scores - 1.0e9, scores)
    y = np.matmul(softmax(scores), value)
    if req.get("query_mask") is not None:
        y = np.where((get("query_mask") != 0)[..., None], y, 0.0)
    return y


def run_attention(req):
    def get(name):
        return _tensor(req.get(name))

    if req["op"] == "attention_mha":
        return mha(req, get)
    if req["op"] == "attention_gqa":
        return gqa(req, get)
    return dense_attention(req, get)
