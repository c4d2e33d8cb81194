"""Usage accounting: what ran on the shared clusters, traced to the team that ran it."""
