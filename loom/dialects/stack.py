"""The stack dialect: per-iteration stacks of saved values for reverse mode through loops."""
