"""Ops assembled from the primitives (layer norm, convolution, QR): installed as vkbackend.ops."""
