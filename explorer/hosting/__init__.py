"""A shared app's caps and the holdings of each session."""
