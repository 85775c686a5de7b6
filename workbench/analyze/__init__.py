"""Analysis of failed episodes: causal steps, analyses with analyzer spans, failure clusters."""
