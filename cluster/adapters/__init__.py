"""Plumbing the use cases call: the Redis hot state, settling, live batching, store identity."""
