"""`loom.lax`: structured control flow, top-k and approximate top-k, and direct access to
StableHLO operations, collectives over mesh axes (inside `loom.shard_map`) and sharding
constraints, in the habits of `jax.lax`."""

from loom.frontend.shard_map import with_sharding_constraint  # noqa: F401
from loom.lax import linalg  # noqa: F401  (loom.lax.linalg, as jax.lax.linalg)
from loom.lax.control_flow import *  # noqa: F403
from loom.lax.ops import *  # noqa: F403
from loom.lax.parallel import *  # noqa: F403
from loom.lax.special import *  # noqa: F403
from loom.lax.topk import *  # noqa: F403
