"""Device-level primitives as Python functions: each checks its input, plans and records shaders."""
