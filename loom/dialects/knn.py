"""The knn dialect: approximate top-k and the fused distance + top-k op."""
