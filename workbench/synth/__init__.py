"""Learn-by-interact synthesis: tasks from a world's documentation, trajectories from playing
them, instructions written backward for what spans of those trajectories achieved, filters that
execute rather than trust, and retrieval of the kept examples while an agent acts."""
