"""The command line and the demo: the top layer, which drives the reconciler and the engines."""
