"""dpcost's shared vocabulary: the error tree, units and lazy exports.

Both ``hardware`` (profiles) and ``costmodel`` (the model) import from here; this package
imports nothing of either, so the two stay one-way (``costmodel`` → ``hardware``).
"""
