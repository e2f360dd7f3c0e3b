"""Dialects shipped with loom. Importing this package registers them."""

import loom.dialects.ad  # noqa: F401
import loom.dialects.arith  # noqa: F401
import loom.dialects.chlo  # noqa: F401
import loom.dialects.comm  # noqa: F401
import loom.dialects.func  # noqa: F401
import loom.dialects.knn  # noqa: F401
import loom.dialects.mpmd  # noqa: F401
import loom.dialects.quant  # noqa: F401
import loom.dialects.sdy  # noqa: F401
import loom.dialects.stablehlo  # noqa: F401
import loom.dialects.stack  # noqa: F401
from loom.dialects import builtin  # noqa: F401
