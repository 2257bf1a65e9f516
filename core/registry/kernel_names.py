"""Kernel names: the one place where every primitive's name is spelled.

Ops call ``run_kernel(<NAME>, inputs, attrs)``; backends register kernels and the gradient
registry registers gradients under these same names (TensorFlow.js spelling).
"""

# elementwise, unary
NEG = "Neg"
ABS = "Abs"
SIGN = "Sign"
EXP = "Exp"
LOG = "Log"
LOG1P = "Log1p"
SQRT = "Sqrt"
RSQRT = "Rsqrt"
SQUARE = "Square"
RECIPROCAL = "Reciprocal"
SIN = "Sin"
COS = "Cos"
TAN = "Tan"
TANH = "Tanh"
SIGMOID = "Sigmoid"
RELU = "Relu"
LEAKY_RELU = "LeakyRelu"
ELU = "Elu"
SELU = "Selu"
SOFTPLUS = "Softplus"
GELU = "Gelu"
ERF = "Erf"
CLIP = "ClipByValue"
CAST = "Cast"
IDENTITY = "Identity"
STOP_GRADIENT = "StopGradient"

# elementwise, binary (numpy broadcasting)
ADD = "Add"
SUB = "Sub"
MUL = "Mul"
DIV = "RealDiv"
POW = "Pow"
MAXIMUM = "Maximum"
MINIMUM = "Minimum"
GREATER = "Greater"
GREATER_EQUAL = "GreaterEqual"
LESS = "Less"
LESS_EQUAL = "LessEqual"
EQUAL = "Equal"
NOT_EQUAL = "NotEqual"
SELECT = "Select"

# fused gradient kernels: one backward step runs one kernel (dy and a saved value in)
TANH_GRAD = "TanhGrad"
SIGMOID_GRAD = "SigmoidGrad"
RELU_GRAD = "ReluGrad"
SQRT_GRAD = "SqrtGrad"
RSQRT_GRAD = "RsqrtGrad"
SIN_GRAD = "SinGrad"
COS_GRAD = "CosGrad"

# reductions
SUM = "Sum"
MAX = "Max"
MIN = "Min"
PROD = "Prod"
SOFTMAX = "Softmax"
LOG_SOFTMAX = "LogSoftmax"

# linear algebra
MATMUL = "BatchMatMul"
# fused dense layer (TensorFlow's spelling): act(op(a) @ op(b) + bias), op = transpose or not
FUSED_MATMUL = "_FusedMatMul"

# shape and indexing
RESHAPE = "Reshape"
TRANSPOSE = "Transpose"
CONCAT = "Concat"
SPLIT = "Split"
SLICE = "Slice"
SLICE_GRAD = "SliceGrad"
PAD = "Pad"
TILE = "Tile"
BROADCAST_TO = "BroadcastTo"
ONE_HOT = "OneHot"

# neural network
CONV2D = "Conv2D"
CONV2D_BACKPROP_INPUT = "Conv2DBackpropInput"
CONV2D_BACKPROP_FILTER = "Conv2DBackpropFilter"
MAX_POOL = "MaxPool"
MAX_POOL_GRAD = "MaxPoolGrad"
MAX_POOL_GATHER = "MaxPoolGather"  # g at each window's maximum: max_pool_grad's 2nd order
AVG_POOL = "AvgPool"
AVG_POOL_GRAD = "AvgPoolGrad"
# fused loss: mean over rows of -sum(labels * log_softmax(logits)); its one-kernel gradient
SOFTMAX_CROSS_ENTROPY = "SoftmaxCrossEntropyWithLogits"
SOFTMAX_CROSS_ENTROPY_GRAD = "SoftmaxCrossEntropyGrad"

# more elementwise math (numpy names; kernels in the elementwise_math families)
SINH = "Sinh"
COSH = "Cosh"
ASIN = "Asin"
ACOS = "Acos"
ATAN = "Atan"
ASINH = "Asinh"
ACOSH = "Acosh"
ATANH = "Atanh"
EXPM1 = "Expm1"
LOG2 = "Log2"
LOG10 = "Log10"
SINC = "Sinc"
FLOOR = "Floor"
CEIL = "Ceil"
ROUND = "Round"
ATAN2 = "Atan2"
LOG_ADD_EXP = "LogAddExp"
LOG_ADD_EXP2 = "LogAddExp2"
HYPOT = "Hypot"
MOD = "FloorMod"
FLOOR_DIV = "FloorDiv"
# bitwise (logical on bool): no gradient, integer or bool results
BITWISE_AND = "BitwiseAnd"
BITWISE_OR = "BitwiseOr"
BITWISE_XOR = "BitwiseXor"
INVERT = "Invert"
LEFT_SHIFT = "LeftShift"
RIGHT_SHIFT = "RightShift"

# scans along an axis
CUMSUM = "Cumsum"
CUMPROD = "Cumprod"

# contraction and dense linear algebra (LAPACK through numpy)
EINSUM = "Einsum"
MATRIX_INVERSE = "MatrixInverse"
MATRIX_DETERMINANT = "MatrixDeterminant"
LOG_MATRIX_DETERMINANT = "LogMatrixDeterminant"
MATRIX_SOLVE = "MatrixSolve"
CHOLESKY = "Cholesky"
SELF_ADJOINT_EIG = "SelfAdjointEigV2"
SVD = "Svd"
QR = "Qr"
PINV = "PseudoInverse"

# every name above: the built-in kernels (the numba backend delegates exactly these to numpy)
ALL = frozenset(v for k, v in dict(globals()).items() if k.isupper() and isinstance(v, str))
