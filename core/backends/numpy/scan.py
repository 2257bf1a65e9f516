"""numpy kernels: running sums and products along one axis."""

from __future__ import annotations

import numpy as np

from ... import kernel_names as K

KERNELS = {
    K.CUMSUM: lambda i, a: np.cumsum(i["x"], axis=a["axis"]),
    K.CUMPROD: lambda i, a: np.cumprod(i["x"], axis=a["axis"]),
}
