"""vk.linalg: numpy.linalg's names for what the library implements, and the array API's linalg
extension (2024.12): QR (qr, householder_product, apply_q); det, slogdet, solve, inv, matrix_power
through QR; cholesky; eigh, eigvalsh (Jacobi); svd, svdvals, pinv, matrix_rank and matrix_norm
(every ord: 2, -2 and 'nuc' from svdvals) through one-sided Jacobi; matmul, matrix_transpose,
tensordot, vecdot, outer, cross, diagonal, trace, vector_norm. float32; where numpy raises
LinAlgError on a singular or indefinite matrix found during the computation, these give inf or
NaN instead (a host sync would be needed to raise)."""
from .ops.qr import *  # noqa: F401,F403
from .ops.linsolve import *  # noqa: F401,F403  (det, slogdet, solve, inv, matrix_power: through QR)
from .ops.cholesky import *  # noqa: F401,F403  (cholesky)
from .ops.eigen import *  # noqa: F401,F403  (eigh, eigvalsh: Jacobi)
from .ops.svd import *  # noqa: F401,F403  (svd, svdvals, pinv, matrix_rank, matrix_norm: one-sided Jacobi)
from .primitives.matmul import *  # noqa: F401,F403  (matmul)
from .primitives.manipulation import matrix_transpose  # noqa: F401
from .primitives.products import cross, outer, tensordot, vecdot  # noqa: F401
from .primitives.diagonal import diagonal, trace  # noqa: F401
from .primitives.norms import vector_norm  # noqa: F401
