"""Stage 1 of the model: α-β-γ formulas of every (primitive, algorithm), their registry,
the float/numpy/sympy evaluators, lower bounds, and the schedules that prove them by execution.

Imports nothing from later stages (nccl, calibrate, cluster, training, planner, plots, commands).
"""
