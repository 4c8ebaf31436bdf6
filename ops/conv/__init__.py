"""N-d convolution, forward and both backward passes, on Vulkan compute: torch.nn.functional's
signatures, float32 or float16 (float32 accumulation).

Every convolution is one general convolution (geometry.py), its input gradient a forward
convolution of the cotangent. A pass is checked (api.py), routed to a kernel family
(select.py), planned (plan_f32.py, plan_f16.py, winograd.py; defaults in tuning.py, overrides
from VKBACKEND_CONV_CONFIG in config.py, loop-budget cuts in loops.py) and recorded
(record.py). docs/conv.md: the kernels, the configuration keys and measured results.
"""
from .api import *  # noqa: F401,F403
from .api import __all__  # noqa: F401
