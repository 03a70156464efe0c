"""Evaluating cases: one small pure function per rule, trials combined by the suite's policy, the engine that runs them."""
