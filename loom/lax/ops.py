"""loom.lax: ops."""

__all__: list[str] = []
