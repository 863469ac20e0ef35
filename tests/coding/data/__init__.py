"""Data files of the coding tests."""
