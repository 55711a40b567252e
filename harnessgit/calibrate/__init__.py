"""`harnessgit calibrate`: an A/A test of the evaluator and the gate (docs/gate.md)."""
