"""The user's programs (an evaluator, a proposer command) as harnessgit runs them.

- `group`: each program leads a process group of its own and carries a token that
  finds its descendants wherever they moved;
- `pipes`: its input written and output read with a deadline and caps;
- `environment`: what it sees of harnessgit's environment (an allow-list);
- `owner`, `scratch`: temporary directories that name their harnessgit process, and
  the sweep of those (and of programs) a killed harnessgit left.
"""
