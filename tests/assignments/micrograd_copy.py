"""micrograd's engine as its public ``engine.py`` and the lecture define it, re-implemented
here from memory (not copied): a ``Value`` whose every op stores a ``_backward`` closure,
``_prev`` a set of children, ``backward()`` in topological order — with the lecture's
``tanh`` and ``exp``. ``make_adapted`` adds the ops assignment B asks for (``log``,
``sigmoid``, ``sin``) and ``zero_grad`` in micrograd's structure: a student who starts from
the public engine and fills in B's missing ops. B's checks must fail both."""

from __future__ import annotations

import math


class MicrogradValue:
    """A scalar and its gradient; each op's output keeps a closure that sends its gradient
    to its children."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, MicrogradValue) else type(self)(other)
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, MicrogradValue) else type(self)(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only supporting int/float powers for now"
        out = type(self)(self.data**other, (self,), f"**{other}")

        def _backward():
            self.grad += (other * self.data ** (other - 1)) * out.grad

        out._backward = _backward
        return out

    def relu(self):
        out = type(self)(0 if self.data < 0 else self.data, (self,), "ReLU")

        def _backward():
            self.grad += (out.data > 0) * out.grad

        out._backward = _backward
        return out

    def _unary(self, value, slope, op):
        out = type(self)(value, (self,), op)

        def _backward():
            self.grad += slope * out.grad

        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        return self._unary(t, 1 - t**2, "tanh")

    def exp(self):
        e = math.exp(self.data)
        return self._unary(e, e, "exp")

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)

        build_topo(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other**-1

    def __rtruediv__(self, other):
        return other * self**-1

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


class AdaptedMicrogradValue(MicrogradValue):
    """The public engine with assignment B's ops and zero_grad added, micrograd's way."""

    def log(self):
        return self._unary(math.log(self.data), 1 / self.data, "log")

    def sigmoid(self):
        s = 1 / (1 + math.exp(-self.data))
        return self._unary(s, s * (1 - s), "sigmoid")

    def sin(self):
        return self._unary(math.sin(self.data), math.cos(self.data), "sin")

    def zero_grad(self):
        stack, seen = [self], set()
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                v.grad = 0
                stack.extend(v._prev)
