"""Collider shapes: signed distance fields (analytic and mesh-sampled), their cache, clipping and dispatch."""
