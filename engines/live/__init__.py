"""The live scan: drift read from list calls, compared with the tree without terraform."""
