#!/usr/bin/python3
"""Float64 NumPy references of Keras 3's optimizers, written from Keras 3's source (not from torchfit's
code), for tests/training/keras_optimizers_test.cpp.

Usage: keras_optimizers_reference.py REQUEST.json RESULT.json
REQUEST: {"config": <Keras get_config() of the optimizer: "name" (adam, adamw, sgd, rmsprop, adagrad,
adadelta, adamax, nadam, lion, ftrl, adafactor) and its arguments>, "w0": {"shape", "data"},
"grads": [{"shape", "data"}, ...] (the gradient of each step), "learning_rates": [lr of each step]}.
RESULT: {"w": [{"shape", "data"} after each step]}.

Each step is Keras's BaseOptimizer.apply: _apply_weight_decay (variable -= variable * wd * lr, when
weight_decay is set; AdamW's default 0.004), then the optimizer's update_step with iterations = the step
index (0 at the first), as in keras/src/optimizers/<name>.py (Keras 3.x):
- adam/adamw (adam.py): alpha = lr*sqrt(1-b2^t)/(1-b1^t); m += (g-m)(1-b1); v += (g^2-v)(1-b2);
  amsgrad: vhat = max(vhat, v), v = vhat; w -= m*alpha/(sqrt(v)+eps).
- sgd (sgd.py): m = m*momentum - g*lr; nesterov: w += m*momentum - g*lr, else w += m; momentum 0: w -= g*lr.
- rmsprop (rmsprop.py): vel = rho*vel + (1-rho)g^2; centered: avg = rho*avg + (1-rho)g,
  den = vel - avg^2 + eps, else den = vel + eps; inc = lr*g/sqrt(den); momentum > 0: mom = momentum*mom
  + inc, w -= mom; else w -= inc.
- adagrad (adagrad.py): acc (from initial_accumulator_value) += g^2; w -= lr*g/sqrt(acc+eps).
- adadelta (adadelta.py): rms(x) = sqrt(x+eps); A = rho*A + (1-rho)g^2; d = -rms(D)*g/rms(A);
  D = rho*D + (1-rho)d^2; w += lr*d.
- adamax (adamax.py): m += (g-m)(1-b1); u = max(b2*u, |g|); w -= lr*m/((1-b1^t)(u+eps)).
- nadam (nadam.py and _backend_update_step): u_product *= b1*(1-0.5*0.96^t) before update_step;
  u_t = b1(1-0.5*0.96^t), u_t1 = b1(1-0.5*0.96^(t+1)); m += (g-m)(1-b1); v += (g^2-v)(1-b2);
  m_hat = u_t1*m/(1-u_product*u_t1) + (1-u_t)*g/(1-u_product); v_hat = v/(1-b2^t);
  w -= m_hat*lr/(sqrt(v_hat)+eps).
- lion (lion.py): w -= lr*sign(m*b1 + g*(1-b1)); m = m*b2 + g*(1-b2).
- ftrl (ftrl.py): l2 = l2 + beta/(2 lr); g2 = g + 2*l2_shrinkage*w; n1 = n + g^2;
  z += g2 - (n1^-p - n^-p)/lr*w; quad = n1^-p/lr + 2*l2; w = (clip(z, -l1, l1) - z)/quad; n = n1.
- adafactor (adafactor.py): rho = min(lr, 1/sqrt(t)); alpha = max(eps2, rms(w))*rho; G = g^2 + eps1;
  b = 1 - t^beta_2_decay; rank >= 2: r = b r + (1-b) mean(G, -1), c = b c + (1-b) mean(G, -2),
  v = (r / mean(r, -1, keepdims))[..., None] * c[..., None, :]; else v = b v + (1-b) G; u = g/sqrt(v);
  w -= alpha * u / max(1, rms(u)/clip_threshold).
(t = iterations + 1.)
"""
import json
import sys

import numpy as np


def tensor(j):
    return np.array(j["data"], dtype=np.float64).reshape(j["shape"])


def tensor_json(a):
    return {"shape": list(a.shape), "data": a.reshape(-1).tolist()}


class Optimizer:
    def __init__(self, c, w):
        self.c = c
        self.s = {}
        self.w = w
        self.u_product = 1.0

    def slot(self, name, init=0.0):
        if name not in self.s:
            self.s[name] = np.full_like(self.w, init)
        return self.s[name]

    def step(self, g, lr, iterations):
        c = self.c
        wd = c.get("weight_decay")
        if wd:
            self.w = self.w - self.w * wd * lr
        getattr(self, c["name"])(g, lr, iterations + 1.0)

    def adam(self, g, lr, t):
        c = self.c
        b1, b2 = c["beta_1"], c["beta_2"]
        alpha = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        m, v = self.slot("m"), self.slot("v")
        m += (g - m) * (1 - b1)
        v += (g * g - v) * (1 - b2)
        if c.get("amsgrad"):
            vhat = self.slot("vhat")
            vhat[...] = np.maximum(vhat, v)
            v = vhat
        self.w = self.w - m * alpha / (np.sqrt(v) + c["epsilon"])

    adamw = adam

    def sgd(self, g, lr, t):
        c = self.c
        mu = c["momentum"]
        if mu != 0:
            m = self.slot("m")
            m[...] = m * mu - g * lr
            self.w = self.w + (m * mu - g * lr if c["nesterov"] else m)
        else:
            self.w = self.w - g * lr

    def rmsprop(self, g, lr, t):
        c = self.c
        rho, eps = c["rho"], c["epsilon"]
        vel = self.slot("vel")
        vel[...] = rho * vel + (1 - rho) * g * g
        if c["centered"]:
            avg = self.slot("avg")
            avg[...] = rho * avg + (1 - rho) * g
            den = vel - avg * avg + eps
        else:
            den = vel + eps
        inc = lr * g / np.sqrt(den)
        if c["momentum"] > 0:
            mom = self.slot("mom")
            mom[...] = c["momentum"] * mom + inc
            self.w = self.w - mom
        else:
            self.w = self.w - inc

    def adagrad(self, g, lr, t):
        acc = self.slot("acc", self.c["initial_accumulator_value"])
        acc += g * g
        self.w = self.w - lr * g / np.sqrt(acc + self.c["epsilon"])

    def adadelta(self, g, lr, t):
        rho, eps = self.c["rho"], self.c["epsilon"]
        A, D = self.slot("A"), self.slot("D")
        A[...] = rho * A + (1 - rho) * g * g
        d = -np.sqrt(D + eps) * g / np.sqrt(A + eps)
        D[...] = rho * D + (1 - rho) * d * d
        self.w = self.w + lr * d

    def adamax(self, g, lr, t):
        b1, b2 = self.c["beta_1"], self.c["beta_2"]
        m, u = self.slot("m"), self.slot("u")
        m += (g - m) * (1 - b1)
        u[...] = np.maximum(b2 * u, np.abs(g))
        self.w = self.w - lr * m / ((1 - b1**t) * (u + self.c["epsilon"]))

    def nadam(self, g, lr, t):
        b1, b2 = self.c["beta_1"], self.c["beta_2"]
        self.u_product *= b1 * (1.0 - 0.5 * 0.96**t)
        u_t = b1 * (1.0 - 0.5 * 0.96**t)
        u_t1 = b1 * (1.0 - 0.5 * 0.96 ** (t + 1))
        m, v = self.slot("m"), self.slot("v")
        m += (g - m) * (1 - b1)
        v += (g * g - v) * (1 - b2)
        m_hat = u_t1 * m / (1 - self.u_product * u_t1) + (1 - u_t) * g / (1 - self.u_product)
        v_hat = v / (1 - b2**t)
        self.w = self.w - m_hat * lr / (np.sqrt(v_hat) + self.c["epsilon"])

    def lion(self, g, lr, t):
        b1, b2 = self.c["beta_1"], self.c["beta_2"]
        m = self.slot("m")
        self.w = self.w - lr * np.sign(m * b1 + g * (1 - b1))
        m[...] = m * b2 + g * (1 - b2)

    def ftrl(self, g, lr, t):
        c = self.c
        p = c["learning_rate_power"]
        l2 = c["l2_regularization_strength"] + c["beta"] / (2.0 * lr)
        n = self.slot("n", c["initial_accumulator_value"])
        z = self.slot("z")
        g2 = g + 2 * c["l2_shrinkage_regularization_strength"] * self.w
        n1 = n + g * g
        z += g2 - (n1 ** (-p) - n ** (-p)) / lr * self.w
        quad = n1 ** (-p) / lr + 2 * l2
        l1 = c["l1_regularization_strength"]
        self.w = (np.clip(z, -l1, l1) - z) / quad
        n[...] = n1

    def adafactor(self, g, lr, t):
        c = self.c
        rms = lambda x: np.sqrt(np.mean(np.square(x)))
        if c["relative_step"]:
            lr = min(lr, 1 / np.sqrt(t))
        rho = min(lr, 1 / np.sqrt(t))
        alpha = max(c["epsilon_2"], rms(self.w)) * rho
        G = g * g + c["epsilon_1"]
        b = 1 - t ** c["beta_2_decay"]
        if self.w.ndim >= 2:
            if "r" not in self.s:
                self.s["r"] = np.zeros(self.w.shape[:-1])
                self.s["c"] = np.zeros(self.w.shape[:-2] + self.w.shape[-1:])
            r, cc = self.s["r"], self.s["c"]
            r[...] = b * r + (1 - b) * np.mean(G, axis=-1)
            cc[...] = b * cc + (1 - b) * np.mean(G, axis=-2)
            v = (r / np.mean(r, axis=-1, keepdims=True))[..., None] * cc[..., None, :]
        else:
            v = self.slot("v")
            v[...] = b * v + (1 - b) * G
        u = g / np.sqrt(v)
        self.w = self.w - alpha * u / max(1.0, rms(u) / c["clip_threshold"])


def main():
    with open(sys.argv[1]) as f:
        req = json.load(f)
    opt = Optimizer(req["config"], tensor(req["w0"]))
    out = []
    for i, (g, lr) in enumerate(zip(req["grads"], req["learning_rates"])):
        opt.step(tensor(g), lr, i)
        out.append(tensor_json(opt.w))
    with open(sys.argv[2], "w") as f:
        json.dump({"w": out}, f)


if __name__ == "__main__":
    main()
