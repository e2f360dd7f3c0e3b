"""Helpers shared by the test modules, imported by name (`from support.paths import CORPUS`):
pyproject's pytest options put tests/ on sys.path. Test modules import from here, never from one
another."""
