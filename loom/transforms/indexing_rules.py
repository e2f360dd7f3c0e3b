"""VJP, JVP and batching rules for gather, scatter, dynamic slicing and convolution."""
