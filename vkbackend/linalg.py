"""vk.linalg: numpy.linalg's names for what the library implements, and the array API's linalg
extension (2024.12) as far as it goes. Absent, because they need an eigen- or singular value
decomposition vkbackend does not have: cholesky, eigh, eigvalsh, svd, svdvals, pinv, matrix_rank
(and matrix_norm's ord 2, -2, 'nuc')."""
from .ops.qr import *  # noqa: F401,F403
from .ops.linsolve import *  # noqa: F401,F403  (det, slogdet, solve, inv, matrix_power: through QR)
from .primitives.matmul import *  # noqa: F401,F403  (matmul)
from .primitives.manipulation import matrix_transpose  # noqa: F401
from .primitives.products import cross, outer, tensordot, vecdot  # noqa: F401
from .primitives.diagonal import diagonal, trace  # noqa: F401
from .primitives.norms import matrix_norm, vector_norm  # noqa: F401
