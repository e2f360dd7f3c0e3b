"""`loom.lax`: structured control flow, top-k and approximate top-k, and direct access to
StableHLO operations, in the habits of `jax.lax`."""

from loom.lax.control_flow import *  # noqa: F403
from loom.lax.ops import *  # noqa: F403
from loom.lax.special import *  # noqa: F403
from loom.lax.topk import *  # noqa: F403
