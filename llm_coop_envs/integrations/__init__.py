"""Adapters to other training libraries. Each module imports its library only when used."""
