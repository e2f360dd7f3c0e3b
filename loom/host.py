"""`loom.host`: the host side of a program's host communication. `stablehlo.infeed`, `outfeed`,
`send` and `recv` call the callbacks registered here (see loom.ops.host for their signatures); an
op that finds none raises an error naming it and what to register.

    loom.host.register_infeed(lambda specs, config: [np.zeros(s, d) for s, d in specs])
    loom.host.register_outfeed(lambda arrays, config: print(arrays))
"""

from loom.ops.host import TOKEN, Token, register_infeed, register_outfeed, register_recv, register_send

__all__ = ["TOKEN", "Token", "register_infeed", "register_outfeed", "register_recv", "register_send"]
