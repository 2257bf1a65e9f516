"""numpy kernels: batched matrix multiply (numpy broadcasting over batch dimensions)."""

from __future__ import annotations

import numpy as np

from ... import kernel_names as K

KERNELS = {
    K.MATMUL: lambda i, a: np.matmul(i["a"], i["b"]),
}
