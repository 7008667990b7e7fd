"""digitise: handwritten backgammon recording notes to JellyFish .mat files."""
__version__ = "0.1.0"
