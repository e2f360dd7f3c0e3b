"""A file object whose write "kills the process" partway: the crash-during-save tests' tool."""

from __future__ import annotations


class CrashingFile:
    """Wraps a binary file: its `crash_at`-th write (counting from 1) writes half its data, flushes
    and raises SystemExit (the process 'dies'); earlier writes go through."""

    def __init__(self, f, crash_at: int = 1):
        self.f = f
        self.crash_at = crash_at
        self.writes = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        self.writes += 1
        if self.writes < self.crash_at:
            return self.f.write(data)
        self.f.write(data[: len(data) // 2])
        self.f.flush()
        raise SystemExit("simulated crash mid-write")

    def __getattr__(self, name):
        return getattr(self.f, name)
