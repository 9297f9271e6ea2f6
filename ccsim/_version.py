"""ccsim's version, the one source of it: setup.cfg reads this literal
without importing ccsim, ``ccsim.__version__`` re-exports it, and the sweep
store records it without importing the package that imports the sweeps."""

__version__ = "0.1.0"
