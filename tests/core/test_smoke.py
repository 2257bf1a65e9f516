import numpy as np

import tapeviz as tv


def test_grad_of_square():
    g = tv.grad(lambda x: tv.sum(x * x))(tv.tensor([1.0, 2.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])
