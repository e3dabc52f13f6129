"""Renderers: they walk a Derivation's steps and never compute attention themselves."""
