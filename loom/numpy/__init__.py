"""`loom.numpy` (imported as `lnp`): NumPy's API over traced values and plain arrays.

Inside `loom.jit` the functions take `Tracer`s and insert StableHLO ops, promoting dtypes as JAX
does (Python scalars are weakly typed: `x_f32 + 1.0` stays float32) and broadcasting as NumPy does.
Called on plain arrays outside tracing, they run as under `loom.jit` (traced and compiled once
per signature, as JAX's eager calls: the same dtypes, values and errors; see `_eager`), NumPy
serving only what tracing cannot (creation functions, calls that need concrete values).
Creation functions (`zeros`, `arange`, ...) return NumPy arrays with JAX's default dtypes
(float32, int32; float64, int64 with `enable_x64`); combined with tracers they become constants.

The functions live in topic modules, as jax/_src/numpy's: `_lax_numpy` (creation, shapes,
selection), `_ufuncs` (elementwise), `_reductions`, `_tensor_contractions`, `_sorting`, `_setops`,
`_indexing` (`x[idx]`, `x.at[idx]`), `_index_tricks`, `_polynomial`, `_window_functions`,
`_vectorize`, `_scalar_types` (dtype names); `linalg` is public. Each builds on `loom.lax` and the
tracing core (`loom.frontend.tracing`).
"""

from __future__ import annotations

import types

from loom.dialects.stablehlo import DotDimensionNumbers  # noqa: F401 - part of the namespace
from loom.frontend.tracing import (  # noqa: F401 - part of the namespace
    TraceContext,
    Tracer,
    TracerError,
    ir_element_type,
    is_floating,
    promote_types,
    scalar_dtype,
    user_line,
)
from loom.numpy._index_tricks import *  # noqa: F403
from loom.numpy._index_tricks import __all__ as _index_tricks_all  # noqa: E402
from loom.numpy._indexing import *  # noqa: F403
from loom.numpy._indexing import __all__ as _indexing_all  # noqa: E402
from loom.numpy._lax_numpy import *  # noqa: F403
from loom.numpy._lax_numpy import __all__ as _lax_numpy_all  # noqa: E402
from loom.numpy._polynomial import *  # noqa: F403
from loom.numpy._polynomial import __all__ as _polynomial_all  # noqa: E402
from loom.numpy._reductions import *  # noqa: F403
from loom.numpy._reductions import __all__ as _reductions_all  # noqa: E402
from loom.numpy._scalar_types import *  # noqa: F403
from loom.numpy._scalar_types import __all__ as _scalar_types_all  # noqa: E402
from loom.numpy._scalar_types import ndarray  # noqa: F401 - part of the namespace
from loom.numpy._setops import *  # noqa: F403
from loom.numpy._setops import __all__ as _setops_all  # noqa: E402
from loom.numpy._sorting import *  # noqa: F403
from loom.numpy._sorting import __all__ as _sorting_all  # noqa: E402
from loom.numpy._tensor_contractions import *  # noqa: F403
from loom.numpy._tensor_contractions import __all__ as _tensor_contractions_all  # noqa: E402
from loom.numpy._ufuncs import *  # noqa: F403
from loom.numpy._ufuncs import __all__ as _ufuncs_all  # noqa: E402
from loom.numpy._util import ArrayLike, Axis, e, inf, nan, pi  # noqa: F401 - part of the namespace
from loom.numpy._vectorize import *  # noqa: F403
from loom.numpy._vectorize import __all__ as _vectorize_all  # noqa: E402
from loom.numpy._window_functions import *  # noqa: F403
from loom.numpy._window_functions import __all__ as _window_functions_all  # noqa: E402

__all__ = sorted(_scalar_types_all + _lax_numpy_all + _ufuncs_all + _reductions_all + _tensor_contractions_all
                 + _sorting_all + _setops_all + _index_tricks_all + _indexing_all + _polynomial_all
                 + _window_functions_all + _vectorize_all)

# Eager calls (plain arrays, no trace) run as jitted ones (loom.numpy._eager);
# the modules call each other's functions directly, so the policy applies once, at this boundary.
from loom.numpy import _eager  # noqa: E402

for _name in __all__:
    if isinstance(globals()[_name], types.FunctionType):
        globals()[_name] = _eager.run_eager_as_jitted(globals()[_name])

from loom.numpy import _array_methods, linalg  # noqa: E402, F401 - built on the functions above

_array_methods.register()  # tracers' array methods and operators: loom.numpy's functions
