"""loom.lax: control_flow."""

__all__: list[str] = []
