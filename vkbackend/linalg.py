"""vk.linalg: numpy.linalg's names for what the library implements."""
from .ops.qr import *  # noqa: F401,F403
from .primitives.matmul import *  # noqa: F401,F403  (matmul)
