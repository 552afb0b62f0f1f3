"""The particle world and its step: state, neighbours, time-stepping schemes, the step loop, checkpoints."""
