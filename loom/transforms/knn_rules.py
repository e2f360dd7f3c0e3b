"""VJP, JVP and batching rules of the knn dialect."""
