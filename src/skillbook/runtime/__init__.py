"""What a running agent keeps between turns: skill snapshots and their version counters."""
