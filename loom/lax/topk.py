"""loom.lax: topk."""

__all__: list[str] = []
